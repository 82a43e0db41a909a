import { createHash } from 'node:crypto';
import { Controller, type MooringObject, type Reconciler } from './controller.ts';
import { EventRecorder } from './event-recorder.ts';
import { HttpServers } from './http-servers.ts';
import { HttpsTransport, loadKubeConfig } from './https-transport.ts';
import { instrumentTransport } from './instrumented-transport.ts';
import { KubeClient } from './kube-client.ts';
import { LeaderElector, leaderIdentity } from './leader-election.ts';
import { formatListenAddress, parseListenAddress } from './listen-address.ts';
import { createLogger, type Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import {
  checkListenCollisions,
  type DefaultOverrides,
  type FlagTable,
  isListenFlag,
  mergeFlagTables,
  type OperatorOptions,
  OptionsError,
  type ParseContext,
  parseOperatorOptions,
  usage,
  withDefaults,
} from './operator-options.ts';
import { SharedInformers } from './shared-informers.ts';

/** What an operator's wiring gets to build its reconcilers with. */
export interface OperatorContext {
  client: KubeClient;
  options: OperatorOptions;
  log: Logger;
  events: EventRecorder;
  metrics: Metrics;
}

/** One operator (source, kustomize, ...): its reconcilers, run under one leader lease. */
export interface OperatorDefinition {
  /** Short name, e.g. `source`; the Lease is `mooring-<name>-leader-election` (see leaseName). */
  name: string;
  /**
   * Flags only this operator has (e.g. the source operator's `--storage-path`), declared like
   * the shared ones: parsed and checked with them, listed in `--help` and docs/operations.md.
   */
  extraFlags?: FlagTable;
  /**
   * Starts what the operator serves on every replica, leader or not (the source operator's
   * artifact server). Runs before `reconcilers`; the returned function runs after the controllers stop.
   */
  start?(ctx: OperatorContext): Promise<() => Promise<void>>;
  // Reconcilers of different kinds share one list, so their object types are erased here.
  reconcilers(ctx: OperatorContext): Reconciler<MooringObject>[];
}

/** Leader-election timings; Flux's defaults unless a test shortens them. */
export interface LeaseTimings {
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface RunOptions {
  lease?: LeaseTimings;
  /** Resolves when the process should stop; SIGTERM and SIGINT by default. */
  shutdown?: AbortSignal;
  onReady?: (ports: { metrics: number; health: number }) => void;
}

function signalOnTermination(): AbortSignal {
  const ctl = new AbortController();
  const stop = () => ctl.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return ctl.signal;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((r) => signal.addEventListener('abort', () => r(), { once: true }));
}

/**
 * Runs operators in this process until shutdown: one API client, logger, metrics, event recorder,
 * set of informers and pair of HTTP servers shared by all, and per operator its controllers, under its own lease
 * when `--leader-elect` is set. On shutdown it stops taking work, lets reconciles in flight finish
 * within `--shutdown-timeout`, flushes events, releases the leases and resolves 0; a lost lease
 * resolves 1 so the process restarts clean.
 */
export async function runOperators(
  defs: OperatorDefinition[],
  options: OperatorOptions,
  run: RunOptions = {},
): Promise<number> {
  const name = defs.map((d) => d.name).join('+');
  const log = createLogger({ level: options.logLevel, name });
  const metrics = new Metrics();
  const transport = instrumentTransport(
    await HttpsTransport.create(loadKubeConfig(options.kubeconfig)),
    metrics,
  );
  const client = new KubeClient(transport, {
    userAgent: `mooring-${name}`,
    qps: options.kubeApiQps,
    burst: options.kubeApiBurst,
  });
  const events = new EventRecorder({
    client,
    component: `mooring-${name}`,
    eventsAddr: options.eventsAddr,
    logger: log,
  });
  const ctx: OperatorContext = { client, options, log, events, metrics };
  // Every controller of every operator here reads a kind from one cache, fed by one watch.
  const informers = new SharedInformers(client);
  const stoppers: (() => Promise<void>)[] = [];
  const leading = new Set<string>();
  let controllersOf: Map<string, Controller<MooringObject>[]>;
  let servers: HttpServers;
  let ports: { metrics: number; health: number };
  try {
    for (const def of defs) {
      if (!def.start) continue;
      try {
        stoppers.push(await def.start(ctx));
      } catch (err) {
        throw new OperatorStartError(def.name, err);
      }
    }
    controllersOf = new Map(
      defs.map((def) => [
        def.name,
        def.reconcilers(ctx).map(
          (r) =>
            new Controller(r, {
              client,
              concurrent: options.concurrent,
              namespace: options.watchNamespace,
              labelSelector: options.watchLabelSelector,
              log,
              metrics,
              events,
              reportingController: `mooring-${def.name}`,
              informers,
            }),
        ),
      ]),
    );
    servers = new HttpServers({
      metricsAddr: options.metricsAddr,
      healthAddr: options.healthAddr,
      metrics,
      // A replica waiting for its lease is ready: it serves probes and takes over when needed.
      ready: () =>
        [...leading].every((op) => controllersOf.get(op)?.every((c) => c.informer.hasSynced()) ?? true),
    });
    ports = await servers.start();
  } catch (err) {
    // What did start is stopped again, so nothing it holds open keeps the process alive.
    for (const stop of stoppers.reverse()) await stop().catch(() => {});
    client.close();
    throw err;
  }
  run.onReady?.(ports);
  const requested = run.shutdown ?? signalOnTermination();
  // One lost lease stops every operator in the process, so it restarts whole.
  const stopAll = new AbortController();
  requested.addEventListener('abort', () => stopAll.abort(), { once: true });
  if (requested.aborted) stopAll.abort();
  const shutdown = stopAll.signal;
  const identity = leaderIdentity();
  log.info({ identity, operators: defs.map((d) => d.name), ...ports }, 'operator started');

  const lead = async (op: string, leaderSignal: AbortSignal) => {
    const controllers = controllersOf.get(op) ?? [];
    leading.add(op);
    await Promise.all(controllers.map((c) => c.start()));
    log.info({ operator: op, kinds: controllers.map((c) => c.kind) }, 'reconciling');
    await untilAborted(leaderSignal);
    log.info({ operator: op }, 'stopping: finishing reconciles in flight');
    await Promise.all(controllers.map((c) => c.stop(options.shutdownTimeoutMs)));
    leading.delete(op);
  };

  const outcomes = await Promise.all(
    defs.map(async (def): Promise<'stopped' | 'lost'> => {
      if (!options.leaderElect) {
        await lead(def.name, shutdown);
        return 'stopped';
      }
      const elector = new LeaderElector({
        client,
        namespace: options.leaderElectionNamespace,
        name: leaseName(def.name, options.watchLabelSelector),
        identity,
        logger: log,
        ...run.lease,
      });
      const outcome = await elector.run(shutdown, {
        onStartedLeading: (leaderSignal) => lead(def.name, leaderSignal),
        onStoppedLeading: () => log.info({ operator: def.name }, 'stopped leading'),
      });
      if (outcome === 'lost') stopAll.abort();
      return outcome;
    }),
  );
  await events.flush(2_000);
  for (const stop of stoppers) await stop();
  await servers.close();
  client.close();
  const lost = outcomes.includes('lost');
  log[lost ? 'error' : 'info']({}, lost ? 'lost the leader lease; exiting' : 'stopped');
  return lost ? 1 : 0;
}

/** An operator's `start` failed (it could not bind its server, say); `cause` says why. */
export class OperatorStartError extends Error {
  readonly operator: string;
  constructor(operator: string, cause: unknown) {
    super(`the ${operator} operator could not start: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = 'OperatorStartError';
    this.operator = operator;
  }
}

/** One program that runs operators: a single operator's `main.ts`, or the all-in-one process. */
export interface OperatorEntry {
  /** The name in `--help` and in error lines, e.g. `mooring-source`. */
  program: string;
  /** The operators it can run. */
  operators: OperatorDefinition[];
  /** Flags of the program itself (the all-in-one's `--only`). */
  flags?: FlagTable;
  /** Defaults it changes from the operators' own (the all-in-one's, where those would collide in one process). */
  defaults?: DefaultOverrides;
  /** Which of `operators` to run, from the parsed flags; all of them when absent. May throw an OptionsError. */
  select?: (options: OperatorOptions, operators: OperatorDefinition[]) => OperatorDefinition[];
}

/** The flag sections of an entry after the shared flags: its own, then each operator's, with its defaults. */
export function entrySections(entry: OperatorEntry): { title: string; flags: FlagTable }[] {
  const sections = entry.flags ? [{ title: `Flags of ${entry.program}`, flags: entry.flags }] : [];
  for (const def of entry.operators) {
    sections.push({
      title: `Flags of the ${def.name} operator`,
      flags: withDefaults(def.extraFlags ?? {}, entry.defaults),
    });
  }
  return sections;
}

/** Every flag an entry accepts besides the shared ones, with its defaults applied. */
export function entryFlags(entry: OperatorEntry): FlagTable {
  return mergeFlagTables(entrySections(entry).map((s) => s.flags));
}

/** The listen addresses the chosen operators would bind, by flag: the shared servers' and each operator's own. */
function listenAddresses(options: OperatorOptions, defs: OperatorDefinition[]): [string, string][] {
  const out: [string, string][] = [
    ['metrics-addr', options.metricsAddr],
    ['health-addr', options.healthAddr],
  ];
  const seen = new Set<string>();
  for (const def of defs) {
    for (const [name, spec] of Object.entries(def.extraFlags ?? {})) {
      const value = options.extra[name];
      if (!isListenFlag(spec) || typeof value !== 'string' || seen.has(name)) continue;
      seen.add(name);
      out.push([name, value]);
    }
  }
  return out;
}

/** Node's error for a failed listen: `listen EADDRINUSE: address already in use :::9090`. */
interface ListenError extends Error {
  code?: string;
  syscall?: string;
  port?: number;
}

const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'the address is not available on this machine',
};

/** One line for a failure at start-up; a failed listen names the address and the flag that set it. */
function failureLine(err: unknown, addresses: [string, string][]): string {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause !== undefined && !(cause as ListenError).syscall)
    cause = cause.cause;
  const listen = cause as ListenError;
  const who = err instanceof OperatorStartError ? `the ${err.operator} operator` : 'the process';
  let line: string;
  if (listen instanceof Error && listen.syscall === 'listen' && listen.port !== undefined) {
    const flags = addresses.filter(([, v]) => parseListenAddress(v).port === listen.port);
    const address = flags[0] ? formatListenAddress(parseListenAddress(flags[0][1])) : `port ${listen.port}`;
    const named = flags.length ? ` (${flags.map(([f]) => `--${f}`).join(', ')})` : '';
    const reason = LISTEN_REASONS[listen.code ?? ''] ?? listen.message;
    line = `${who} cannot listen on ${address}${named}: ${reason}`;
  } else line = err instanceof Error ? err.message : String(err);
  return line.replace(/\s*\n\s*/g, ' ');
}

/** Where `operatorMain` reads its command line and writes; the process's own by default. */
export interface MainIO {
  argv?: string[];
  env?: Record<string, string | undefined>;
  /** Receives the `--help` text. */
  stdout?: (text: string) => void;
  /** Receives the one line that says why the program stops with an error. */
  stderr?: (line: string) => void;
  context?: Omit<ParseContext, 'extraFlags'>;
  run?: RunOptions;
}

/**
 * The `main` of every operator program. Parses the shared flags with the entry's and its
 * operators' own (each with its twin, default and check), prints `--help`, refuses listen
 * addresses that would collide, and runs the chosen operators until shutdown.
 *
 * Resolves the exit code, one rule for every program: 0 after `--help` or a clean shutdown;
 * 2 for a bad flag or environment variable (nothing was started); 1 for a failure at run time
 * (a server that cannot listen, an unreadable kubeconfig, a lost leader lease). An error is
 * one line on stderr, prefixed with the program's name. Callers exit with the code, so no handle
 * left open can keep the process alive.
 */
export async function operatorMain(entry: OperatorEntry, io: MainIO = {}): Promise<number> {
  const stdout = io.stdout ?? ((text: string) => process.stdout.write(`${text}\n`));
  const stderr = io.stderr ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fail = (line: string) => stderr(`${entry.program}: ${line.replace(/\s*\n\s*/g, ' ')}`);
  let parsed: ParsedEntry;
  try {
    parsed = parseEntry(entry, io.argv ?? process.argv.slice(2), io.env ?? process.env, io.context);
  } catch (err) {
    fail((err as Error).message);
    return err instanceof OptionsError ? 2 : 1;
  }
  if (parsed.options.help) {
    stdout(usage(entry.program, entrySections(entry)));
    return 0;
  }
  try {
    return await runOperators(parsed.operators, parsed.options, io.run);
  } catch (err) {
    fail(failureLine(err, parsed.addresses));
    return 1;
  }
}

/** An entry's command line, resolved: what `operatorMain` runs. */
export interface ParsedEntry {
  options: OperatorOptions;
  /** The operators chosen; none after `--help`. */
  operators: OperatorDefinition[];
  /** Each listen address they would bind, by flag. */
  addresses: [flag: string, address: string][];
}

/**
 * Everything `operatorMain` checks before it starts anything: the flags and their twins, the
 * operators chosen, and that no two of their listen addresses share a port. Throws an
 * OptionsError naming the flag when one is bad.
 */
export function parseEntry(
  entry: OperatorEntry,
  argv: string[],
  env: Record<string, string | undefined>,
  context: Omit<ParseContext, 'extraFlags'> = {},
): ParsedEntry {
  const options = parseOperatorOptions(argv, env, { ...context, extraFlags: entryFlags(entry) });
  if (options.help) return { options, operators: [], addresses: [] };
  const operators = entry.select ? entry.select(options, entry.operators) : entry.operators;
  const addresses = listenAddresses(options, operators);
  checkListenCollisions(addresses);
  return { options, operators, addresses };
}

/**
 * The Lease an operator's replicas contend for. Shards (`--watch-label-selector`) each get their
 * own, suffixed with a digest of the selector as Flux's controllers do, so the replicas of one
 * shard elect one leader among them while every shard works: with one Lease for all, only one
 * shard of the fleet would ever reconcile.
 */
export function leaseName(operator: string, watchLabelSelector: string | undefined): string {
  const base = `mooring-${operator}-leader-election`;
  if (!watchLabelSelector) return base;
  return `${base}-${createHash('sha256').update(watchLabelSelector).digest('hex').slice(0, 10)}`;
}
