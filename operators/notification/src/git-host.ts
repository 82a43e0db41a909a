// What `mooring plan --post` uses of the notification operator (@mooring/notification-operator/git-host):
// the Git hosts' request builders and the sender with its retries, the code the Providers run.
export {
  type CommitStatus,
  commitStatusRequest,
  GIT_HOSTS,
  type GitHost,
  type GitHostTarget,
  pullRequestCommentRequest,
} from './providers/git-host-api.ts';
export { SendError, sendRequest } from './providers/http-sender.ts';
export type { OutboundRequest } from './providers/types.ts';
