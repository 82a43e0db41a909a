import { objectTitle } from '../event.ts';
import {
  bearer,
  isCommitStatusUpdate,
  jsonPost,
  type Notification,
  type PayloadBuilder,
  type ProviderConfig,
} from './types.ts';

/** Slack's message with one legacy attachment, the shape Flux sends (also Rocket.Chat and Discord's /slack). */
export function slackPayload(n: Notification, p: ProviderConfig): Record<string, unknown> {
  const e = n.event;
  const fields = Object.keys(e.metadata)
    .sort()
    .map((k) => ({ title: k, value: e.metadata[k], short: false }));
  const payload: Record<string, unknown> = {};
  if (p.channel) payload.channel = p.channel;
  if (p.username) payload.username = p.username;
  payload.attachments = [
    {
      color: e.severity === 'error' ? 'danger' : 'good',
      author_name: objectTitle(e),
      text: e.message,
      mrkdwn_in: ['text'],
      ...(fields.length > 0 ? { fields } : {}),
    },
  ];
  return payload;
}

/** `slack`: an incoming webhook, or chat.postMessage with the bot token as Bearer. */
export const slack: PayloadBuilder = (n, p) =>
  isCommitStatusUpdate(n) ? undefined : jsonPost(p.address, slackPayload(n, p), p, bearer(p));
