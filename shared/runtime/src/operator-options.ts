import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { formatDuration, parseDuration } from './duration.ts';
import { formatListenAddress, type ListenAddress, parseListenAddress } from './listen-address.ts';
import { LOG_LEVELS, type LogLevel } from './logger.ts';

/** The flags every operator shares, resolved and validated. */
export interface OperatorOptions {
  /** Path of the kubeconfig; absent means in-cluster or the default resolution. */
  kubeconfig: string | undefined;
  concurrent: number;
  metricsAddr: string;
  healthAddr: string;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  /** The one namespace to watch; absent means all namespaces. */
  watchNamespace: string | undefined;
  watchLabelSelector: string | undefined;
  logLevel: LogLevel;
  /** URL of the notification receiver; absent means events are not posted. */
  eventsAddr: string | undefined;
  noCrossNamespaceRefs: boolean;
  defaultServiceAccount: string | undefined;
  requeueDependencyMs: number;
  shutdownTimeoutMs: number;
  /** Client-side rate limit of API requests, as client-go's QPS and burst. */
  kubeApiQps: number;
  kubeApiBurst: number;
  help: boolean;
  /**
   * Values of the caller's own flags (`ParseContext.extraFlags`), by flag name, resolved like the
   * shared ones (flag, else environment twin, else default) and already checked: a string flag
   * with no value is absent, a boolean flag is true or false.
   */
  extra: Record<string, string | boolean | undefined>;
}

/** Checks one value of a flag (given, from its twin, or its default); throws an OptionsError naming `from`. */
export type FlagCheck = (value: string, from: string) => void;

/**
 * One flag, as the parser, `--help` and docs/operations.md all read it: the shared flags and
 * every operator's own are declared in this one shape.
 */
export interface FlagSpec {
  type: 'string' | 'boolean';
  /** One sentence, for `--help` and the docs. */
  help: string;
  /** The value when neither the flag nor its twin is set; none when absent or empty. */
  default?: string;
  /** The default as the docs say it, where the literal default is not the whole story. */
  shown?: string;
  /** The environment twin; `MOORING_<FLAG>` when absent. */
  env?: string;
  short?: string;
  /** Refuses a bad value with an OptionsError; a bad value is never replaced by the default. */
  check?: FlagCheck;
  /**
   * A default worked out from other flags (read with `get`, which sees the shared flags), used
   * before `default` when it returns a value: the event server's port from `--events-addr`.
   */
  derive?: (get: (flag: string) => string | undefined) => string | undefined;
}

/** Flags by name, without the leading `--`. */
export type FlagTable = Record<string, FlagSpec>;

/** What `parseOperatorOptions` reads besides argv and the environment; tests replace it. */
export interface ParseContext {
  /** The namespace this process runs in, when in a cluster; reads the service account's namespace file by default. */
  inClusterNamespace?: () => string | undefined;
  /** Flags of the operators (and of the program itself, e.g. all-in-one's `--only`), parsed alongside the shared ones. */
  extraFlags?: FlagTable;
}

/** A bad flag or environment variable; the message names it. */
export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

const FALLBACK_NAMESPACE = 'mooring-system';
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The environment twin of a flag: its own `env`, else `MOORING_<FLAG>`. */
export function envTwin(name: string, spec: Pick<FlagSpec, 'env'> = {}): string {
  return spec.env ?? `MOORING_${name.toUpperCase().replaceAll('-', '_')}`;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const listenAddress: FlagCheck = (value, from) => {
  try {
    parseListenAddress(value);
  } catch (err) {
    throw new OptionsError(`${from}: ${(err as Error).message}`);
  }
};

/** The checks flags are declared with; each throws an OptionsError that names the flag and the value. */
export const flagChecks = {
  /** A whole number from `min` to `max` (or at least `min`). */
  wholeNumber(min: number, max?: number): FlagCheck {
    return (value, from) => {
      const n = Number(value);
      if (!/^[0-9]+$/.test(value) || n < min || (max !== undefined && n > max)) {
        const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
        throw new OptionsError(`${from} must be a whole number ${range}, got ${JSON.stringify(value)}`);
      }
    };
  },
  /** A Go duration (`30s`, `1m30s`) of at least `minMs`. */
  duration(minMs = 0): FlagCheck {
    return (value, from) => {
      let ms: number;
      try {
        ms = parseDuration(value);
      } catch (err) {
        throw new OptionsError(`${from}: ${(err as Error).message}`);
      }
      if (ms < minMs)
        throw new OptionsError(`${from} must be at least ${formatDuration(minMs)}, got ${value}`);
    };
  },
  /** `[host]:port` to listen on; such flags must not share a port within one process. */
  listenAddress,
  /** One of the given words. */
  oneOf(...choices: string[]): FlagCheck {
    return (value, from) => {
      if (!choices.includes(value)) {
        throw new OptionsError(`${from} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
      }
    };
  },
  /** A text matching `pattern`, at most `max` characters; `what` says what it must be. */
  matching(pattern: RegExp, max: number, what: string): FlagCheck {
    return (value, from) => {
      if (!pattern.test(value) || value.length > max) {
        throw new OptionsError(`${from} must be ${what}, got ${JSON.stringify(value)}`);
      }
    };
  },
  /** An http or https URL; `example` shows one. */
  httpUrl(example: string): FlagCheck {
    return (value, from) => {
      let url: URL | undefined;
      try {
        url = new URL(value);
      } catch {}
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw new OptionsError(
          `${from} must be an http or https URL, like ${example}, got ${JSON.stringify(value)}`,
        );
      }
    };
  },
  /** `host` or `host:port` as a client dials it (a DNS name, an IPv4 address or a bracketed IPv6 one). */
  hostPort(value: string, from: string): void {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9.])?)(?::([0-9]{1,5}))?$/.exec(
      value,
    );
    if (!m || (m[2] !== undefined && Number(m[2]) > 65_535)) {
      throw new OptionsError(
        `${from} must be host or host:port, like source.mooring-system.svc.cluster.local. or localhost:9090, got ${JSON.stringify(value)}`,
      );
    }
  },
} as const;

const namespaceName = flagChecks.matching(
  DNS1123_LABEL,
  63,
  'a namespace name (lowercase letters, digits and -, at most 63 characters)',
);

/** The shared flags, in the order `--help` and the docs list them. */
export const SHARED_FLAGS: Readonly<FlagTable> = {
  kubeconfig: {
    type: 'string',
    env: 'KUBECONFIG',
    help: 'Path of the kubeconfig; in-cluster config when empty.',
  },
  concurrent: {
    type: 'string',
    default: '4',
    help: 'Reconciles run in parallel (per kind).',
    check: flagChecks.wholeNumber(1, 1000),
  },
  'metrics-addr': {
    type: 'string',
    default: ':8080',
    help: 'Address of the Prometheus `/metrics` server; port 0 picks a free port.',
    check: listenAddress,
  },
  'health-addr': {
    type: 'string',
    default: ':9440',
    help: 'Address of the `/healthz` and `/readyz` server.',
    check: listenAddress,
  },
  'leader-elect': {
    type: 'boolean',
    default: 'false',
    help: 'Take a Lease before reconciling, so only one replica works at a time.',
  },
  'leader-election-namespace': {
    type: 'string',
    help: 'Namespace of the leader election Lease.',
    shown: `the pod's namespace (\`POD_NAMESPACE\` or the service account's), else \`${FALLBACK_NAMESPACE}\``,
    check: namespaceName,
  },
  'watch-namespace': {
    type: 'string',
    help: 'Only reconcile objects in this namespace.',
    shown: 'all namespaces',
    check: namespaceName,
  },
  'watch-label-selector': {
    type: 'string',
    help: 'Only reconcile objects matching this label selector (sharding: each shard elects its leader on a Lease of its own).',
  },
  'log-level': {
    type: 'string',
    default: 'info',
    help: `Least severe level logged: ${LOG_LEVELS.join(', ')}.`,
    check: flagChecks.oneOf(...LOG_LEVELS),
  },
  'events-addr': {
    type: 'string',
    help: 'URL the events are posted to (the notification receiver); not posted when empty.',
    check: flagChecks.httpUrl('http://notification.mooring-system:9090/'),
  },
  'no-cross-namespace-refs': {
    type: 'boolean',
    default: 'false',
    help: 'Refuse references to objects in other namespaces.',
  },
  'default-service-account': {
    type: 'string',
    help: 'Service account to impersonate when an object names none.',
    check: flagChecks.matching(
      DNS1123_SUBDOMAIN,
      253,
      'a service account name (lowercase letters, digits, - and .)',
    ),
  },
  'requeue-dependency': {
    type: 'string',
    default: '30s',
    help: 'How soon to retry an object whose dependencies are not ready.',
    check: flagChecks.duration(1),
  },
  'shutdown-timeout': {
    type: 'string',
    default: '25s',
    help: 'How long to let reconciles in flight finish on SIGTERM.',
    check: flagChecks.duration(0),
  },
  'kube-api-qps': {
    type: 'string',
    default: '50',
    help: "Sustained API requests per second (client-side limit), as Flux: for the operator's own requests, and separately for those it makes as each impersonated service account.",
    check: flagChecks.wholeNumber(1, 100_000),
  },
  'kube-api-burst': {
    type: 'string',
    default: '300',
    help: 'API requests allowed in a burst above the sustained rate, as Flux.',
    check: flagChecks.wholeNumber(1, 100_000),
  },
};

function readServiceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves the shared flags and `context.extraFlags` from `argv` (without node and script),
 * falling back to their environment twins and then to their defaults, and checks every value;
 * throws an OptionsError naming the flag (or its twin) when one is bad.
 */
export function parseOperatorOptions(
  argv: string[],
  env: Record<string, string | undefined>,
  context: ParseContext = {},
): OperatorOptions {
  const extraFlags = context.extraFlags ?? {};
  for (const name of Object.keys(extraFlags)) {
    if (Object.hasOwn(SHARED_FLAGS, name) || name === 'help') {
      throw new Error(`extra flag --${name} clashes with a shared flag`);
    }
  }
  const table: FlagTable = { ...SHARED_FLAGS, ...extraFlags };
  const booleans = new Set([
    ...Object.entries(table)
      .filter(([, f]) => f.type === 'boolean')
      .map(([n]) => n),
    'help',
  ]);
  // Go flags accept `--leader-elect=false`; node's parseArgs does not, so such values are taken apart here.
  const explicitFalse = new Set<string>();
  const args: string[] = [];
  for (const arg of argv) {
    const m = /^--([^=]+)=(.*)$/.exec(arg);
    if (m && booleans.has(m[1]!)) {
      const value = parseBoolean(m[2]!, `--${m[1]}`);
      if (value) args.push(`--${m[1]}`);
      else explicitFalse.add(m[1]!);
      continue;
    }
    args.push(arg);
  }

  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, f] of Object.entries(table)) {
    options[name] = f.short ? { type: f.type, short: f.short } : { type: f.type };
  }
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new OptionsError(`${(err as Error).message.replace(/\. To specify.*$/s, '')}; see --help`);
  }
  for (const name of explicitFalse) values[name] = false;

  // Each flag: its value, else its twin's, else its derived default, else its default. An empty
  // value counts as unset. Whatever the value came from, it is checked.
  const resolved = new Map<string, string | boolean>();
  const get = (name: string): string | undefined => {
    const v = resolved.get(name);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  for (const [name, spec] of Object.entries(table)) {
    const given = values[name];
    const twin = envTwin(name, spec);
    let value: string | boolean;
    let from = `--${name}`;
    if (given !== undefined && given !== '' && !Array.isArray(given)) value = given;
    else if (env[twin] !== undefined && env[twin] !== '') {
      value = env[twin];
      from = `${twin} (twin of --${name})`;
    } else value = spec.derive?.(get) ?? spec.default ?? (spec.type === 'boolean' ? 'false' : '');
    if (spec.type === 'boolean') {
      if (typeof value === 'string') value = parseBoolean(value, from);
    } else if (typeof value === 'string' && value !== '') spec.check?.(value, from);
    resolved.set(name, value);
  }
  const text = (name: string): string => get(name) ?? '';
  const bool = (name: string): boolean => resolved.get(name) === true;

  const leaderElectionNamespace =
    get('leader-election-namespace') ??
    (env.POD_NAMESPACE || undefined) ??
    (context.inClusterNamespace ?? readServiceAccountNamespace)() ??
    FALLBACK_NAMESPACE;

  const extra: Record<string, string | boolean | undefined> = {};
  for (const name of Object.keys(extraFlags)) {
    const v = resolved.get(name);
    extra[name] = typeof v === 'boolean' ? v : get(name);
  }

  return {
    kubeconfig: get('kubeconfig'),
    concurrent: Number(text('concurrent')),
    metricsAddr: text('metrics-addr'),
    healthAddr: text('health-addr'),
    leaderElect: bool('leader-elect'),
    leaderElectionNamespace,
    watchNamespace: get('watch-namespace'),
    watchLabelSelector: get('watch-label-selector'),
    logLevel: text('log-level') as LogLevel,
    eventsAddr: get('events-addr'),
    noCrossNamespaceRefs: bool('no-cross-namespace-refs'),
    defaultServiceAccount: get('default-service-account'),
    requeueDependencyMs: parseDuration(text('requeue-dependency')),
    shutdownTimeoutMs: parseDuration(text('shutdown-timeout')),
    kubeApiQps: Number(text('kube-api-qps')),
    kubeApiBurst: Number(text('kube-api-burst')),
    help: values.help === true,
    extra,
  };
}

function parseBoolean(text: string, from: string): boolean {
  const t = text.toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  throw new OptionsError(`${from} must be true or false, got ${JSON.stringify(text)}`);
}

/**
 * The flags of several operators as one table, for a process that runs them together. A flag
 * two operators both declare (`--storage-path`) is one flag, so its type, twin and default must
 * agree; the first declaration is kept.
 */
export function mergeFlagTables(tables: readonly FlagTable[]): FlagTable {
  const merged: FlagTable = {};
  for (const table of tables) {
    for (const [name, spec] of Object.entries(table)) {
      const seen = merged[name];
      if (!seen) {
        merged[name] = spec;
        continue;
      }
      const same =
        seen.type === spec.type &&
        envTwin(name, seen) === envTwin(name, spec) &&
        (seen.default ?? '') === (spec.default ?? '');
      if (!same) throw new Error(`--${name} is declared twice with a different type, twin or default`);
    }
  }
  return merged;
}

/** A default a program changes, with how the docs say it. */
export type DefaultOverrides = Record<string, Pick<FlagSpec, 'default' | 'shown'>>;

/** `table` with the defaults in `overrides` (only for flags it has). */
export function withDefaults(table: FlagTable, overrides: DefaultOverrides = {}): FlagTable {
  const out: FlagTable = {};
  for (const [name, spec] of Object.entries(table)) {
    const o = overrides[name];
    out[name] = o ? { ...spec, default: o.default, shown: o.shown } : spec;
  }
  return out;
}

/** True for a flag that names an address to listen on. */
export function isListenFlag(spec: FlagSpec): boolean {
  return spec.check === listenAddress;
}

function overlaps(a: ListenAddress, b: ListenAddress): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  const wildcard = (h: string | undefined) => h === undefined || h === '0.0.0.0' || h === '::';
  return wildcard(a.host) || wildcard(b.host) || a.host!.toLowerCase() === b.host!.toLowerCase();
}

/**
 * Refuses two listen addresses of one process on the same port, naming both flags: they could
 * not both be bound. `--metrics-addr` and `--health-addr` may be the very same address (one
 * server then serves both).
 */
export function checkListenCollisions(
  addresses: readonly (readonly [flag: string, address: string])[],
): void {
  const parsed = addresses.map(([flag, text]) => ({ flag, addr: parseListenAddress(text) }));
  for (const [i, a] of parsed.entries()) {
    for (const b of parsed.slice(i + 1)) {
      if (!overlaps(a.addr, b.addr)) continue;
      const shared = new Set([a.flag, b.flag]);
      const sameServer = formatListenAddress(a.addr) === formatListenAddress(b.addr);
      if (shared.has('metrics-addr') && shared.has('health-addr') && sameServer) continue;
      throw new OptionsError(
        `--${a.flag} (${formatListenAddress(a.addr)}) and --${b.flag} (${formatListenAddress(b.addr)}) ` +
          `would listen on the same port ${a.addr.port} in one process; give one of them another address`,
      );
    }
  }
}

/** A markdown table of `flags`: flag, environment twin, default, meaning. */
export function describeFlags(flags: FlagTable): string {
  const rows = Object.entries(flags).map(([name, f]) => {
    const def = f.shown ?? (f.default ? `\`${f.default}\`` : '');
    return `| \`--${name}\` | \`${envTwin(name, f)}\` | ${def} | ${f.help} |`;
  });
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The shared flags' table for `docs/operations.md`. */
export function describeOptions(): string {
  return describeFlags(SHARED_FLAGS);
}

function usageLines(flags: FlagTable): string[] {
  return Object.entries(flags).map(([name, f]) => {
    const arg = f.type === 'boolean' ? `--${name}` : `--${name} <value>`;
    const shown = (f.shown ?? f.default ?? '').replaceAll('`', '');
    const def = shown ? ` (default ${shown})` : '';
    return `  ${arg.padEnd(36)} ${f.help.replaceAll('`', '')}${def} [${envTwin(name, f)}]`;
  });
}

/** `--help` text: the shared flags, then each section's (an operator's own flags), one line per flag. */
export function usage(
  program: string,
  sections: readonly { title: string; flags: FlagTable }[] = [],
): string {
  const lines = [`Usage: ${program} [flags]`, '', 'Flags:', ...usageLines(SHARED_FLAGS)];
  lines.push(`  ${'--help, -h'.padEnd(36)} Show this help.`);
  for (const s of sections) {
    if (Object.keys(s.flags).length === 0) continue;
    lines.push('', `${s.title}:`, ...usageLines(s.flags));
  }
  return lines.join('\n');
}
