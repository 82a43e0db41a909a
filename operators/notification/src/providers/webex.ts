import { objectTitle } from '../event.ts';
import { bearer, isCommitStatusUpdate, jsonPost, metadataLines, type PayloadBuilder } from './types.ts';

/** `webex`: POST /v1/messages with the bot token, the room in `channel`, the text as markdown. */
export const webex: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n) || !p.channel) return undefined;
  const e = n.event;
  const icon = e.severity === 'error' ? '💣' : '✅';
  const lines = [
    `${icon} **${objectTitle(e)}**`,
    '',
    e.message,
    ...metadataLines(e.metadata).map((l) => `* ${l}`),
  ];
  return jsonPost(p.address, { roomId: p.channel, markdown: lines.join('\n') }, p, bearer(p));
};
