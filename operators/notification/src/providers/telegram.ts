import { objectTitle } from '../event.ts';
import { isCommitStatusUpdate, jsonPost, metadataLines, type PayloadBuilder } from './types.ts';

/** Telegram's Bot API address when the Provider names none. */
export const TELEGRAM_API = 'https://api.telegram.org';

/** `telegram`: Bot API sendMessage; the token is part of the URL, so the URL must never be logged. */
export const telegram: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n) || !p.token || !p.channel) return undefined;
  const e = n.event;
  const base = (p.address || TELEGRAM_API).replace(/\/$/, '');
  const text = [
    `${e.severity === 'error' ? '💣' : '✅'} ${objectTitle(e)}`,
    e.message,
    ...metadataLines(e.metadata),
  ].join('\n');
  return jsonPost(`${base}/bot${p.token}/sendMessage`, { chat_id: p.channel, text }, p);
};
