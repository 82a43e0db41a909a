import type { InboundEvent } from '../event.ts';

/** One event on its way to one provider: metadata already merged with the Alert's. */
export interface Notification {
  event: InboundEvent;
  alert: { name: string; namespace: string };
}

/** A Provider with its Secret resolved: everything a payload builder may read. */
export interface ProviderConfig {
  type: string;
  name: string;
  namespace: string;
  uid: string;
  address: string;
  channel?: string;
  username?: string;
  /** `token` of the secretRef. */
  token?: string;
  /** `username`/`password` of the secretRef (basic auth). */
  basicAuth?: { username: string; password: string };
  /** `headers` of the secretRef, added to every request. */
  headers: Record<string, string>;
  timeoutMs: number;
  tls?: { ca?: string; cert?: string; key?: string };
  proxy?: string;
}

/** One HTTP request a provider makes. */
export interface OutboundRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Builds the request a provider type sends for a notification; undefined means this type skips it. */
export type PayloadBuilder = (n: Notification, p: ProviderConfig) => OutboundRequest | undefined;

/** A JSON POST with the secret's extra headers. */
export function jsonPost(
  url: string,
  payload: unknown,
  p: ProviderConfig,
  headers: Record<string, string> = {},
): OutboundRequest {
  return {
    method: 'POST',
    url,
    headers: { ...p.headers, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  };
}

/** `Authorization: Bearer <token>` when the provider has a token. */
export function bearer(p: ProviderConfig): Record<string, string> {
  return p.token ? { authorization: `Bearer ${p.token}` } : {};
}

/** Metadata as `key: value` lines, sorted so messages are stable. */
export function metadataLines(metadata: Record<string, string>): string[] {
  return Object.keys(metadata)
    .sort()
    .map((k) => `${k}: ${metadata[k]}`);
}

/** True for events marked as commit-status updates, which only Git and generic providers take. */
export function isCommitStatusUpdate(n: Notification): boolean {
  return n.event.metadata.commit_status === 'update';
}
