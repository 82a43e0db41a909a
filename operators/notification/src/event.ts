import { createHash } from 'node:crypto';

/** An event as operators post it (ARCHITECTURE.md, event contract), after validation. */
export interface InboundEvent {
  involvedObject: { kind: string; namespace: string; name: string; uid?: string; apiVersion?: string };
  severity: 'info' | 'error';
  timestamp: string;
  message: string;
  reason: string;
  metadata: Record<string, string>;
  reportingController: string;
  reportingInstance?: string;
}

/** Longest message accepted, as Flux's API validation. */
export const MAX_MESSAGE = 39_000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const optString = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';

/**
 * Checks a decoded JSON body against the event contract; returns the event or a sentence saying
 * what is wrong. Hand-written because the contract is eight fields and the error must name the field.
 */
export function parseEvent(body: unknown): InboundEvent | string {
  if (!isObject(body)) return 'the event must be a JSON object';
  const o = body.involvedObject;
  if (!isObject(o)) return 'involvedObject must be an object';
  for (const f of ['kind', 'name'] as const) {
    if (typeof o[f] !== 'string' || o[f] === '') return `involvedObject.${f} must be a non-empty string`;
  }
  if (!optString(o.namespace) || !optString(o.uid) || !optString(o.apiVersion))
    return 'involvedObject namespace, uid and apiVersion must be strings';
  const severity = body.severity ?? 'info';
  if (severity !== 'info' && severity !== 'error') return "severity must be 'info' or 'error'";
  if (typeof body.message !== 'string') return 'message must be a string';
  if (body.message.length > MAX_MESSAGE) return `message is longer than ${MAX_MESSAGE} characters`;
  if (!optString(body.reason) || !optString(body.timestamp) || !optString(body.reportingInstance))
    return 'reason, timestamp and reportingInstance must be strings';
  if (typeof body.reportingController !== 'string' || body.reportingController === '')
    return 'reportingController must be a non-empty string';
  const metadata: Record<string, string> = {};
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) return 'metadata must be an object of strings';
    for (const [k, v] of Object.entries(body.metadata)) {
      if (typeof v !== 'string') return `metadata.${k} must be a string`;
      metadata[k] = v;
    }
  }
  return {
    involvedObject: {
      kind: o.kind as string,
      name: o.name as string,
      namespace: (o.namespace as string | undefined) ?? '',
      uid: o.uid as string | undefined,
      apiVersion: o.apiVersion as string | undefined,
    },
    severity,
    timestamp: (body.timestamp as string | undefined) ?? new Date().toISOString(),
    message: body.message,
    reason: (body.reason as string | undefined) ?? '',
    metadata,
    reportingController: body.reportingController,
    reportingInstance: body.reportingInstance as string | undefined,
  };
}

const groupOf = (apiVersion: string | undefined) =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/** Prefix of object annotations copied into event metadata by emitters (Flux's and Mooring's). */
const EVENT_PREFIXES = ['event.mooring.dev/', 'event.toolkit.fluxcd.io/'];

/**
 * Flux's metadata clean-up: keeps plain keys (Mooring's recorder sends `revision`), the involved
 * object's `<group>/` keys with the prefix stripped, and `event.*` annotation keys; drops
 * `checksum` and `digest`, which would defeat deduplication and are noise in a chat message.
 */
export function cleanMetadata(event: InboundEvent): Record<string, string> {
  const group = groupOf(event.involvedObject.apiVersion);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.metadata)) {
    let key: string | undefined;
    if (!k.includes('/')) key = k;
    else if (group && k.startsWith(`${group}/`)) key = k.slice(group.length + 1);
    else if (EVENT_PREFIXES.some((p) => k.startsWith(p))) key = k.slice(k.indexOf('/') + 1);
    if (key === undefined || key === 'checksum' || key === 'digest' || key === '') continue;
    out[key] = v;
  }
  return out;
}

/** The duplicate-suppression key of an event, as Flux builds it (object, message, revisions, token). */
export function dedupeKey(event: InboundEvent, metadata: Record<string, string>): string {
  const o = event.involvedObject;
  let key = `event/name=${o.name}/namespace=${o.namespace}/kind=${o.kind}/message=${event.message}`;
  for (const f of ['originRevision', 'revision', 'token'] as const) {
    if (metadata[f] !== undefined) key += `/${f}=${metadata[f]}`;
  }
  return createHash('sha256').update(key).digest('hex');
}

/** `kind/name.namespace`, lower-case kind: how chat providers name the object (Flux's format). */
export function objectTitle(event: InboundEvent): string {
  const o = event.involvedObject;
  return `${o.kind.toLowerCase()}/${o.name}.${o.namespace}`;
}

/** Extracts the Git commit SHA from a revision (`main@sha1:<sha>`, `sha1:<sha>`, legacy `main/<sha>`). */
export function commitFromRevision(revision: string | undefined): string | undefined {
  if (!revision) return undefined;
  const m = /(?:^|[@/:])([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision);
  return m?.[1];
}
