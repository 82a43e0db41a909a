import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { formatDuration, parseDuration } from './duration.ts';
import { parseListenAddress } from './listen-address.ts';
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
  /** Values of the caller's own extra flags (`ParseContext.extraFlags`), by flag name. */
  extra: Record<string, string | boolean | undefined>;
}

/** What `parseOperatorOptions` reads besides argv and the environment; tests replace it. */
export interface ParseContext {
  /** The namespace this process runs in, when in a cluster; reads the service account's namespace file by default. */
  inClusterNamespace?: () => string | undefined;
  /** Flags only this program has (e.g. all-in-one's `--only`), parsed alongside the shared ones. */
  extraFlags?: Record<string, { type: 'string' | 'boolean'; short?: string; default?: string | boolean }>;
}

/** A bad flag or environment variable; the message names it. */
export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

interface Flag {
  name: string;
  env: string | undefined;
  type: 'string' | 'boolean';
  default: string;
  /** The default as the docs say it, where the literal default is not the whole story. */
  shown?: string;
  help: string;
}

const FALLBACK_NAMESPACE = 'mooring-system';
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

const envName = (flag: string) => `MOORING_${flag.toUpperCase().replaceAll('-', '_')}`;

function flag(name: string, type: Flag['type'], def: string, help: string, shown?: string): Flag {
  return { name, env: envName(name), type, default: def, shown, help };
}

/** The shared flags, in the order `--help` and the docs list them. */
const FLAGS: readonly Flag[] = [
  {
    name: 'kubeconfig',
    env: 'KUBECONFIG',
    type: 'string',
    default: '',
    help: 'Path of the kubeconfig; in-cluster config when empty.',
  },
  flag('concurrent', 'string', '4', 'Reconciles run in parallel (per kind).'),
  flag(
    'metrics-addr',
    'string',
    ':8080',
    'Address of the Prometheus `/metrics` server; port 0 picks a free port.',
  ),
  flag('health-addr', 'string', ':9440', 'Address of the `/healthz` and `/readyz` server.'),
  flag(
    'leader-elect',
    'boolean',
    'false',
    'Take a Lease before reconciling, so only one replica works at a time.',
  ),
  flag(
    'leader-election-namespace',
    'string',
    '',
    'Namespace of the leader election Lease.',
    `the pod's namespace (\`POD_NAMESPACE\` or the service account's), else \`${FALLBACK_NAMESPACE}\``,
  ),
  flag('watch-namespace', 'string', '', 'Only reconcile objects in this namespace.', 'all namespaces'),
  flag(
    'watch-label-selector',
    'string',
    '',
    'Only reconcile objects matching this label selector (sharding).',
  ),
  flag('log-level', 'string', 'info', `Least severe level logged: ${LOG_LEVELS.join(', ')}.`),
  flag(
    'events-addr',
    'string',
    '',
    'URL the events are posted to (the notification receiver); not posted when empty.',
  ),
  flag('no-cross-namespace-refs', 'boolean', 'false', 'Refuse references to objects in other namespaces.'),
  flag('default-service-account', 'string', '', 'Service account to impersonate when an object names none.'),
  flag(
    'requeue-dependency',
    'string',
    '30s',
    'How soon to retry an object whose dependencies are not ready.',
  ),
  flag('shutdown-timeout', 'string', '25s', 'How long to let reconciles in flight finish on SIGTERM.'),
  flag('kube-api-qps', 'string', '50', 'Sustained API requests per second (client-side limit), as Flux.'),
  flag(
    'kube-api-burst',
    'string',
    '300',
    'API requests allowed in a burst above the sustained rate, as Flux.',
  ),
];

function readServiceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Resolves the shared operator flags from `argv` (without node and script), falling back to their
 * environment twins and then to defaults; throws an OptionsError naming the flag when one is bad.
 */
export function parseOperatorOptions(
  argv: string[],
  env: Record<string, string | undefined>,
  context: ParseContext = {},
): OperatorOptions {
  const extraFlags = context.extraFlags ?? {};
  const booleans = new Set([
    ...FLAGS.filter((f) => f.type === 'boolean').map((f) => f.name),
    ...Object.entries(extraFlags)
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
  for (const f of FLAGS) options[f.name] = { type: f.type };
  for (const [name, f] of Object.entries(extraFlags)) {
    if (Object.hasOwn(options, name)) throw new Error(`extra flag --${name} clashes with a shared flag`);
    options[name] = { ...f };
  }
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new OptionsError(`${(err as Error).message.replace(/\. To specify.*$/s, '')}; see --help`);
  }
  for (const name of explicitFalse) values[name] = false;

  /** The flag's value, else its environment twin's, with where it came from for messages. */
  const raw = (name: string): { value: string | boolean; from: string } | undefined => {
    const v = values[name];
    if (v !== undefined && !Array.isArray(v)) return { value: v, from: `--${name}` };
    const f = FLAGS.find((x) => x.name === name)!;
    const e = f.env ? env[f.env] : undefined;
    if (e !== undefined && e !== '') return { value: e, from: `${f.env} (twin of --${name})` };
    return undefined;
  };
  const str = (name: string): { value: string; from: string } | undefined => {
    const r = raw(name);
    return r && typeof r.value === 'string' && r.value !== '' ? { value: r.value, from: r.from } : undefined;
  };
  const bool = (name: string): boolean => {
    const r = raw(name);
    if (r === undefined) return false;
    return typeof r.value === 'boolean' ? r.value : parseBoolean(r.value, r.from);
  };
  /** The flag's string value, else its default. */
  const strOrDefault = (name: string): { value: string; from: string } =>
    str(name) ?? { value: FLAGS.find((f) => f.name === name)!.default, from: `--${name}` };
  const duration = (name: string, min: number): number => {
    const r = strOrDefault(name);
    let ms: number;
    try {
      ms = parseDuration(r.value);
    } catch (err) {
      throw new OptionsError(`${r.from}: ${(err as Error).message}`);
    }
    if (ms < min) throw new OptionsError(`${r.from} must be at least ${formatDuration(min)}, got ${r.value}`);
    return ms;
  };
  const wholeNumber = (name: string, min: number, max: number): number => {
    const r = strOrDefault(name);
    if (!/^[0-9]+$/.test(r.value) || Number(r.value) < min || Number(r.value) > max) {
      throw new OptionsError(
        `${r.from} must be a whole number from ${min} to ${max}, got ${JSON.stringify(r.value)}`,
      );
    }
    return Number(r.value);
  };
  const address = (name: string): string => {
    const r = strOrDefault(name);
    try {
      parseListenAddress(r.value);
    } catch (err) {
      throw new OptionsError(`${r.from}: ${(err as Error).message}`);
    }
    return r.value;
  };
  const matching = (name: string, pattern: RegExp, max: number, what: string): string | undefined => {
    const r = str(name);
    if (r && (!pattern.test(r.value) || r.value.length > max)) {
      throw new OptionsError(`${r.from} must be ${what}, got ${JSON.stringify(r.value)}`);
    }
    return r?.value;
  };

  const concurrentRaw = strOrDefault('concurrent');
  if (
    !/^[0-9]+$/.test(concurrentRaw.value) ||
    Number(concurrentRaw.value) < 1 ||
    Number(concurrentRaw.value) > 1000
  ) {
    throw new OptionsError(
      `${concurrentRaw.from} must be a whole number from 1 to 1000, got ${JSON.stringify(concurrentRaw.value)}`,
    );
  }

  const logLevelRaw = strOrDefault('log-level');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw.value)) {
    throw new OptionsError(
      `${logLevelRaw.from} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevelRaw.value)}`,
    );
  }

  const eventsRaw = str('events-addr');
  if (eventsRaw) {
    let url: URL | undefined;
    try {
      url = new URL(eventsRaw.value);
    } catch {}
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new OptionsError(
        `${eventsRaw.from} must be an http or https URL, like http://notification.mooring-system:9090/, got ${JSON.stringify(eventsRaw.value)}`,
      );
    }
  }

  const namespaceRule = 'a namespace name (lowercase letters, digits and -, at most 63 characters)';
  const leaderElectionNamespace =
    matching('leader-election-namespace', DNS1123_LABEL, 63, namespaceRule) ??
    (env.POD_NAMESPACE || undefined) ??
    (context.inClusterNamespace ?? readServiceAccountNamespace)() ??
    FALLBACK_NAMESPACE;

  const extra: Record<string, string | boolean | undefined> = {};
  for (const name of Object.keys(extraFlags)) {
    const v = values[name];
    extra[name] = Array.isArray(v) ? v.at(-1) : v;
  }

  return {
    kubeconfig: str('kubeconfig')?.value,
    concurrent: Number(concurrentRaw.value),
    metricsAddr: address('metrics-addr'),
    healthAddr: address('health-addr'),
    leaderElect: bool('leader-elect'),
    leaderElectionNamespace,
    watchNamespace: matching('watch-namespace', DNS1123_LABEL, 63, namespaceRule),
    watchLabelSelector: str('watch-label-selector')?.value,
    logLevel: logLevelRaw.value as LogLevel,
    eventsAddr: eventsRaw?.value,
    noCrossNamespaceRefs: bool('no-cross-namespace-refs'),
    defaultServiceAccount: matching(
      'default-service-account',
      DNS1123_SUBDOMAIN,
      253,
      'a service account name (lowercase letters, digits, - and .)',
    ),
    requeueDependencyMs: duration('requeue-dependency', 1),
    shutdownTimeoutMs: duration('shutdown-timeout', 0),
    kubeApiQps: wholeNumber('kube-api-qps', 1, 100_000),
    kubeApiBurst: wholeNumber('kube-api-burst', 1, 100_000),
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

/** The flags table for `docs/operations.md`: flag, environment twin, default, meaning. */
export function describeOptions(): string {
  const rows = FLAGS.map((f) => {
    const def = f.shown ?? (f.default ? `\`${f.default}\`` : '');
    return `| \`--${f.name}\` | \`${f.env}\` | ${def} | ${f.help} |`;
  });
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** `--help` text: one line per flag. */
export function usage(program: string): string {
  const lines = FLAGS.map((f) => {
    const arg = f.type === 'boolean' ? `--${f.name}` : `--${f.name} <value>`;
    const shown = (f.shown ?? f.default).replaceAll('`', '');
    const def = shown ? ` (default ${shown})` : '';
    return `  ${arg.padEnd(36)} ${f.help.replaceAll('`', '')}${def} [${f.env}]`;
  });
  return [
    `Usage: ${program} [flags]`,
    '',
    'Flags:',
    ...lines,
    `  ${'--help, -h'.padEnd(36)} Show this help.`,
  ].join('\n');
}
