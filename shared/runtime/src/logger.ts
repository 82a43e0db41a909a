import { randomUUID } from 'node:crypto';
import type { DestinationStream, Logger } from 'pino';
import pino from 'pino';

export type { Logger } from 'pino';

/** The part of a logger a component calls: a pino Logger fits, and so does a test double. */
export interface LoggerLike {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The levels `--log-level` accepts. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level: LogLevel | 'silent';
  /** The component, e.g. `source-operator`; every line carries it as `logger`. */
  name: string;
  /** Where JSON lines go; standard output when absent. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

const REDACTED = '[Redacted]';

/** Keys that may hold credentials wherever they appear near the top of a log line. */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

/** Deepest level searched for Secret objects in a log line. */
const SECRET_SEARCH_DEPTH = 6;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function maskValues(map: unknown): unknown {
  if (!isPlainObject(map)) return REDACTED;
  return Object.fromEntries(Object.keys(map).map((k) => [k, REDACTED]));
}

/**
 * Returns `value` with the `data` and `stringData` of every Secret in it masked (keys kept, values
 * replaced), copying only what changes. A log line may carry a whole object; a Secret's values must
 * never reach the log.
 */
export function redactSecretData(value: unknown, depth = 0): unknown {
  if (depth > SECRET_SEARCH_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = redactSecretData(v, depth + 1);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  if (!isPlainObject(value)) return value;
  if (value.kind === 'Secret' && ('data' in value || 'stringData' in value)) {
    const out = { ...value };
    if ('data' in out) out.data = maskValues(out.data);
    if ('stringData' in out) out.stringData = maskValues(out.stringData);
    return out;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = redactSecretData(v, depth + 1);
    if (r !== v) {
      out ??= { ...value };
      out[k] = r;
    }
  }
  return out ?? value;
}

/** A JSON-lines logger (pino) with credential paths and Secret data redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { logger: options.name },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => redactSecretData(obj) as Record<string, unknown>,
      },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    options.destination,
  );
}

/** A logger that drops everything: the default where a component is given none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** The parts of an object a log line names it by. */
export interface LoggedObject {
  kind: string;
  metadata: { namespace?: string; name?: string };
}

/**
 * A child logger whose every line carries `kind`, `namespace`, `name` and `reconcileID`, so all
 * lines about one reconcile of one object can be found together. A fresh reconcileID when none given.
 */
export function objectLogger(logger: Logger, obj: LoggedObject, reconcileID: string = randomUUID()): Logger {
  return logger.child({
    kind: obj.kind,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name,
    reconcileID,
  });
}
