/** The kstatus statuses; `NotFound` and `Unknown` come from callers that poll, not from an object. */
export type KStatus = 'InProgress' | 'Current' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';

/** What `computeStatus` says about one live object. */
export interface StatusResult {
  status: KStatus;
  /** A CamelCase reason such as `LessReady`, when the rule that decided has one. */
  reason?: string;
  message: string;
}

/** A live object as the API server returns it: plain JSON. */
export type LiveObject = Record<string, unknown>;

/** The rule for one kind: it always decides. */
export type KindRule = (object: LiveObject, now: Date) => StatusResult;

/** An InProgress result with a reason. */
export function inProgress(reason: string, message: string): StatusResult {
  return { status: 'InProgress', reason, message };
}

/** A Failed result with a reason. */
export function failed(reason: string, message: string): StatusResult {
  return { status: 'Failed', reason, message };
}

/** A Current result. */
export function current(message: string): StatusResult {
  return { status: 'Current', message };
}
