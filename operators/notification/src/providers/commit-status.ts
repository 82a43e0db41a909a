import { commitFromRevision } from '../event.ts';
import type { Notification } from './types.ts';

/** A Git repository address taken apart: `https://github.com/org/app(.git)` → origin and `org/app`. */
export interface RepoAddress {
  origin: string;
  host: string;
  /** `owner/repo`, or `group/sub/repo` on GitLab. */
  path: string;
}

/** Parses a repository URL (https or ssh://); undefined when it names no owner/repo. */
export function parseRepoAddress(address: string): RepoAddress | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return undefined;
  }
  const path = url.pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  if (path.split('/').length < 2) return undefined;
  const origin = url.protocol === 'ssh:' ? `https://${url.hostname}` : url.origin;
  return { origin, host: url.hostname, path };
}

/** The commit an event is about: originRevision wins over revision (Flux's order). */
export function eventCommit(n: Notification): string | undefined {
  return (
    commitFromRevision(n.event.metadata.originRevision) ??
    commitFromRevision(n.event.metadata.revision) ??
    commitFromRevision(n.event.metadata.commit)
  );
}

/** The status context: `<kind>/<name>` of the object, lower-case kind as Flux names it. */
export function statusContext(n: Notification): string {
  return `${n.event.involvedObject.kind.toLowerCase()}/${n.event.involvedObject.name}`;
}

/** Outcome of the event as a commit state: errors fail, a Progressing reason is pending, the rest succeed. */
export function commitState(n: Notification): 'success' | 'failure' | 'pending' {
  if (n.event.severity === 'error') return 'failure';
  if (n.event.reason === 'Progressing') return 'pending';
  return 'success';
}

/** Git hosts cut descriptions (GitHub at 140 characters). */
export function shortDescription(message: string, max = 140): string {
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}
