// A toy kind and reconciler for the runtime's own tests: its spec says how each reconcile should
// behave (fail N times, stall, take a while), and its status counts reconciles so a test in
// another process can see them.
import { setTimeout as sleep } from 'node:timers/promises';
import { installCrds } from '../../../hack/lib/control-plane.ts';
import type { MooringObject, ReconcileContext, ReconcileResult, Reconciler } from '../src/controller.ts';
import type { KubeClient, KubeObject } from '../src/index.ts';
import { StalledError, WaitingError } from '../src/reconcile-errors.ts';

export const TOY_API_VERSION = 'test.mooring.dev/v1';
export const TOY_FINALIZER = 'test.mooring.dev/finalizer';

export interface Toy extends MooringObject {
  spec: {
    suspend?: boolean;
    interval?: string;
    /** Fail this many reconciles of the current generation before succeeding. */
    failTimes?: number;
    retryInterval?: string;
    stall?: boolean;
    waitMs?: number;
    /** How long one reconcile takes. */
    workMs?: number;
    message?: string;
  };
}

const toyCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'toys.test.mooring.dev' },
  spec: {
    group: 'test.mooring.dev',
    scope: 'Namespaced',
    names: { kind: 'Toy', plural: 'toys', singular: 'toy', listKind: 'ToyList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

export async function installToyCrd(client: KubeClient): Promise<void> {
  await installCrds(client, [toyCrd]);
}

export function toy(namespace: string, name: string, spec: Toy['spec'] = {}): Toy {
  return { apiVersion: TOY_API_VERSION, kind: 'Toy', metadata: { name, namespace }, spec };
}

/** Every reconcile and finalize the toy saw, in order, by `namespace/name`. */
export interface ToyLog {
  reconciles: Map<string, number[]>;
  finalized: string[];
}

export function toyReconciler(
  log: ToyLog = { reconciles: new Map(), finalized: [] },
): Reconciler<Toy> & { log: ToyLog } {
  const failures = new Map<string, number>();
  return {
    log,
    apiVersion: TOY_API_VERSION,
    kind: 'Toy',
    finalizer: TOY_FINALIZER,
    defaultIntervalMs: 60_000,
    async reconcile(obj: Toy, ctx: ReconcileContext): Promise<ReconcileResult> {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      const times = log.reconciles.get(key) ?? [];
      times.push(Date.now());
      log.reconciles.set(key, times);
      ctx.status.count = ((obj.status?.count as number | undefined) ?? 0) + 1;
      if (process.env.TOY_ID) ctx.status.reconciledBy = process.env.TOY_ID;
      ctx.log.info({}, 'toy reconcile started');
      if (obj.spec.workMs) await sleep(obj.spec.workMs);
      if (obj.spec.stall) throw new StalledError('InvalidSpec', 'spec.stall is set');
      if (obj.spec.waitMs)
        throw new WaitingError('DependencyNotReady', 'waiting for a friend', obj.spec.waitMs);
      const failKey = `${key}@${obj.metadata.generation}`;
      const failed = failures.get(failKey) ?? 0;
      if (failed < (obj.spec.failTimes ?? 0)) {
        failures.set(failKey, failed + 1);
        throw new Error(`planned failure ${failed + 1} of ${obj.spec.failTimes}`);
      }
      return { message: obj.spec.message ?? `reconciled generation ${obj.metadata.generation}` };
    },
    async finalize(obj: Toy): Promise<void> {
      log.finalized.push(`${obj.metadata.namespace}/${obj.metadata.name}`);
    },
  };
}

/** A logger that drops everything, for tests that assert on behaviour, not on logs. */
export const silentLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

export { eventually } from '@mooring/test/harness';
