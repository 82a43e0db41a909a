import { Controller, type MooringObject, type Reconciler } from './controller.ts';
import { EventRecorder } from './event-recorder.ts';
import { HttpServers } from './http-servers.ts';
import { HttpsTransport, loadKubeConfig } from './https-transport.ts';
import { instrumentTransport } from './instrumented-transport.ts';
import { KubeClient } from './kube-client.ts';
import { LeaderElector, leaderIdentity } from './leader-election.ts';
import { createLogger, type Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import type { OperatorOptions, ParseContext } from './operator-options.ts';

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
  /** Short name, e.g. `source`; the Lease is `mooring-<name>-leader-election`. */
  name: string;
  /** Flags only this operator has (e.g. the source operator's `--storage-path`), parsed with the shared ones. */
  extraFlags?: ParseContext['extraFlags'];
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
 * Runs operators in this process until shutdown: one API client, logger, metrics, event recorder
 * and pair of HTTP servers shared by all, and per operator its controllers, under its own lease
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
  const stoppers: (() => Promise<void>)[] = [];
  for (const def of defs) if (def.start) stoppers.push(await def.start(ctx));
  const controllersOf = new Map(
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
          }),
      ),
    ]),
  );
  const leading = new Set<string>();
  const servers = new HttpServers({
    metricsAddr: options.metricsAddr,
    healthAddr: options.healthAddr,
    metrics,
    // A replica waiting for its lease is ready: it serves probes and takes over when needed.
    ready: () =>
      [...leading].every((op) => controllersOf.get(op)?.every((c) => c.informer.hasSynced()) ?? true),
  });
  const ports = await servers.start();
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
        name: `mooring-${def.name}-leader-election`,
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
