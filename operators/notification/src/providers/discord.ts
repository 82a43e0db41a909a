import { slackPayload } from './slack.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** `discord`: Discord's Slack-compatible endpoint, the webhook URL plus `/slack` (as Flux does). */
export const discord: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n)) return undefined;
  const url = new URL(p.address);
  if (!url.pathname.endsWith('/slack')) url.pathname = `${url.pathname.replace(/\/$/, '')}/slack`;
  return jsonPost(url.href, slackPayload(n, p), p);
};
