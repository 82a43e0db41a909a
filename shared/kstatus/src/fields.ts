import type { LiveObject } from './result.ts';

/** One entry of `status.conditions`, with only the fields kstatus reads. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a dotted path such as `spec.replicas`, or undefined when any step is missing. */
export function field(object: LiveObject, path: string): unknown {
  let at: unknown = object;
  for (const key of path.split('.')) {
    if (!isRecord(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** An integer field, or `fallback` when it is missing or not an integer (as cli-utils' GetIntField). */
export function intField(object: LiveObject, path: string, fallback: number): number {
  const value = field(object, path);
  return typeof value === 'number' && Number.isInteger(value) ? value : fallback;
}

/** A string field, or `fallback` when it is missing or not a string. */
export function stringField(object: LiveObject, path: string, fallback = ''): string {
  const value = field(object, path);
  return typeof value === 'string' ? value : fallback;
}

/** The well-formed entries of `status.conditions`; malformed ones are skipped, not fatal. */
export function conditions(object: LiveObject): Condition[] {
  const list = field(object, 'status.conditions');
  if (!Array.isArray(list)) return [];
  return list.flatMap((c): Condition[] => {
    if (!isRecord(c) || typeof c.type !== 'string' || typeof c.status !== 'string') return [];
    return [
      {
        type: c.type,
        status: c.status,
        reason: typeof c.reason === 'string' ? c.reason : undefined,
        message: typeof c.message === 'string' ? c.message : undefined,
        observedGeneration: typeof c.observedGeneration === 'number' ? c.observedGeneration : undefined,
      },
    ];
  });
}

/** The first condition of `type`, if any. */
export function findCondition(object: LiveObject, type: string): Condition | undefined {
  return conditions(object).find((c) => c.type === type);
}

/** `group/Kind` from apiVersion and kind, or just `Kind` for the core group (cli-utils' key). */
export function groupKind(object: LiveObject): string {
  const apiVersion = stringField(object, 'apiVersion');
  const kind = stringField(object, 'kind');
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}
