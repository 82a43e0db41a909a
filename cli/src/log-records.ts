/** The fields of an operator's JSON log line (shared/runtime logger.ts) that `mooring logs` reads. */
export interface LogRecord {
  time?: string | number;
  level?: string;
  /** The operator that wrote it, e.g. `kustomize` (`source+kustomize` for all-in-one). */
  logger?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  msg?: string;
  err?: unknown;
}

/** What `mooring logs` keeps; an absent field keeps everything. */
export interface LogFilter {
  kind?: string;
  name?: string;
  level?: string;
  /** The reconciled object's namespace; absent with --all-namespaces. */
  namespace?: string;
}

function isRecord(value: unknown): value is LogRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.msg === 'string' || typeof v.level === 'string';
}

/** The record a line holds, or undefined when it is not one of the operators' JSON lines. */
export function parseLogLine(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** True when any filter is set: then lines that are not JSON records cannot match and are dropped. */
export function filters(filter: LogFilter): boolean {
  return (
    filter.kind !== undefined ||
    filter.name !== undefined ||
    filter.level !== undefined ||
    filter.namespace !== undefined
  );
}

const same = (want: string | undefined, got: string | undefined): boolean =>
  want === undefined || want.toLowerCase() === (got ?? '').toLowerCase();

/** Flux's rules: every set filter must equal the record's field, case-insensitively. */
export function matches(record: LogRecord, filter: LogFilter): boolean {
  return (
    same(filter.level, record.level) &&
    same(filter.kind, record.kind) &&
    same(filter.name, record.name) &&
    same(filter.namespace, record.namespace)
  );
}

function errorText(err: unknown): string | undefined {
  if (err === undefined || err === null) return undefined;
  if (typeof err === 'string') return err;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' ? message : JSON.stringify(err);
}

function timeText(time: LogRecord['time']): string {
  if (typeof time === 'number') return new Date(time).toISOString();
  return time ?? '-';
}

/** `<time> <level> <operator> <Kind>/<namespace>/<name> <msg>[: <err>]`; `-` for a missing part. */
export function formatRecord(record: LogRecord, operator: string): string {
  const object = record.kind
    ? [record.kind, record.namespace, record.name].filter((p) => p !== undefined && p !== '').join('/')
    : '-';
  const err = errorText(record.err);
  const msg = `${record.msg ?? ''}${err ? `: ${err}` : ''}`;
  return `${timeText(record.time)} ${record.level ?? '-'} ${record.logger ?? operator} ${object} ${msg}`;
}

/** What to print for one raw line of `operator`'s log, or undefined to drop it. */
export function renderLine(line: string, operator: string, filter: LogFilter): string | undefined {
  const record = parseLogLine(line);
  if (!record) return filters(filter) || line === '' ? undefined : line;
  return matches(record, filter) ? formatRecord(record, operator) : undefined;
}
