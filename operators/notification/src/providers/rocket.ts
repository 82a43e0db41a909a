import { slackPayload } from './slack.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** `rocket`: Rocket.Chat incoming webhooks take Slack's attachment format. */
export const rocket: PayloadBuilder = (n, p) =>
  isCommitStatusUpdate(n) ? undefined : jsonPost(p.address, slackPayload(n, p), p);
