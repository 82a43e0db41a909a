// Helm's hook execution (helm v3.22.0 pkg/action/hooks.go execHook) against the cluster, as the
// HelmRelease's identity: the reconciler calls runHooks around install, upgrade, rollback and
// uninstall, and runTests for `helm test`, and writes each hook's last_run from the outcomes.
import {
  deletePoliciesOf,
  type HelmTime,
  type HookEvent,
  type HookRecord,
  helmTime,
  hooksFor,
} from '@mooring/helm';
import type { Impersonation, KubeClient } from '@mooring/runtime';
import { apiMessage, hookObject } from '../hooks/hook-objects.ts';
import {
  deleteByPolicy,
  HookFailure,
  type HookStep,
  rethrowIfAborted,
  runOneHook,
} from '../hooks/hook-runner.ts';

export type { HookEvent, HookRecord } from '@mooring/helm';

/** How one hook ended; the reconciler writes it into the hook's `last_run`. */
export interface HookOutcome {
  name: string;
  kind: string;
  phase: 'Succeeded' | 'Failed';
  startedAt: HelmTime;
  completedAt: HelmTime;
}

/** The hooks that ran, in order; on failure the one that failed (the last that ran, if it started). */
export type HookRunResult =
  | { ok: true; ran: HookOutcome[] }
  | { ok: false; failed: { name: string; kind: string; message: string }; ran: HookOutcome[] };

export interface HookRunOptions {
  client: KubeClient;
  /** The HelmRelease's service account: every read and write of a hook's object is made as it. */
  impersonate?: Impersonation;
  /** The release's namespace, for namespaced hook objects that name none. */
  namespace: string;
  /** How long each wait may take (for a hook to complete, for an old one to be deleted), as Helm's --timeout. */
  timeoutMs: number;
  /** Aborting stops the run where it is (the promise rejects with the signal's reason); objects stay. */
  signal: AbortSignal;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Flux's `spec.test.filters`: with `exclude` the test is skipped, without it only the named ones run. */
export interface TestFilter {
  name: string;
  exclude?: boolean;
}

export interface TestRunOptions extends HookRunOptions {
  filters?: TestFilter[];
}

/** A Helm hook with its object. */
interface Step extends HookStep {
  hook: HookRecord;
}

const labelOf = (event: HookEvent, hook: HookRecord, describe: string) =>
  `${event} hook ${describe}${hook.path ? ` (${hook.path})` : ''}`;

async function execHooks(
  executing: HookRecord[],
  event: HookEvent,
  opts: HookRunOptions,
): Promise<HookRunResult> {
  const ran: HookOutcome[] = [];
  const steps: Step[] = [];
  for (const hook of executing) {
    opts.signal.throwIfAborted();
    const name = hook.name ?? '';
    const kind = hook.kind ?? '';
    let step: Step;
    try {
      const object = await hookObject(hook.manifest ?? '', hook.path ?? name, opts.client, opts);
      step = { hook, object, policies: deletePoliciesOf(hook) };
    } catch (err) {
      rethrowIfAborted(opts.signal);
      const message = `${event} hook ${kind}/${name} cannot be built: ${apiMessage(err)}`;
      return { ok: false, failed: { name, kind, message }, ran };
    }
    const startedAt = helmTime(new Date());
    try {
      await runOneHook(step, opts);
      ran.push({ name, kind, phase: 'Succeeded', startedAt, completedAt: helmTime(new Date()) });
      steps.push(step);
    } catch (err) {
      if (!(err instanceof HookFailure)) throw err;
      if (err.started)
        ran.push({ name, kind, phase: 'Failed', startedAt, completedAt: helmTime(new Date()) });
      let message = `${labelOf(event, hook, step.object.describe)} failed: ${err.message}`;
      if (err.started) {
        // Helm only logs a failed hook-failed delete; the run's failure is the hook's own.
        await deleteByPolicy(step, 'hook-failed', opts).catch(() => rethrowIfAborted(opts.signal));
      }
      // The hooks that succeeded before it still go by hook-succeeded, as in Helm.
      for (const earlier of steps) {
        try {
          await deleteByPolicy(earlier, 'hook-succeeded', opts);
        } catch (cleanup) {
          rethrowIfAborted(opts.signal);
          message += `; deleting ${earlier.object.describe} (hook-succeeded) failed too: ${apiMessage(cleanup)}`;
          break;
        }
      }
      return { ok: false, failed: { name, kind, message }, ran };
    }
  }
  // All succeeded: hook-succeeded deletes them in reverse order, as Helm does at the end of the run.
  for (const step of [...steps].reverse()) {
    try {
      await deleteByPolicy(step, 'hook-succeeded', opts);
    } catch (err) {
      rethrowIfAborted(opts.signal);
      const { name = '', kind = '' } = step.hook;
      const message = `${labelOf(event, step.hook, step.object.describe)} succeeded but deleting it (hook-succeeded) failed: ${apiMessage(err)}`;
      return { ok: false, failed: { name, kind, message }, ran };
    }
  }
  return { ok: true, ran };
}

/**
 * Runs the hooks of `event` with Helm's semantics: by weight, then name; each one's
 * before-hook-creation (the default policy) first, then create and wait (a Job until Complete, a
 * Pod until Succeeded, other kinds at once); the first failure stops the run; hook-failed and
 * hook-succeeded delete afterwards. Rejects only when `opts.signal` aborts.
 */
export function runHooks(
  hooks: readonly HookRecord[],
  event: HookEvent,
  opts: HookRunOptions,
): Promise<HookRunResult> {
  return execHooks(hooksFor(hooks, event), event, opts);
}

/** Helm's ReleaseTesting filters: excluded names go, then, if any name is included, only those stay. */
export function filterTests(hooks: readonly HookRecord[], filters: readonly TestFilter[] = []): HookRecord[] {
  const excluded = new Set(filters.filter((f) => f.exclude).map((f) => f.name));
  const included = new Set(filters.filter((f) => !f.exclude).map((f) => f.name));
  return hooks.filter(
    (h) => !excluded.has(h.name ?? '') && (included.size === 0 || included.has(h.name ?? '')),
  );
}

/**
 * `helm test`: the release's `test` hooks (Helm 2's `test-success` among them), filtered as Flux's
 * `spec.test.filters` say, through the same runner; `ran` holds one outcome per test that ran.
 */
export function runTests(hooks: readonly HookRecord[], opts: TestRunOptions): Promise<HookRunResult> {
  return execHooks(hooksFor(filterTests(hooks, opts.filters), 'test'), 'test', opts);
}
