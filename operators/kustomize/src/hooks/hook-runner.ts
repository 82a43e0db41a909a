// Running one hook object, shared by HelmRelease hooks (Helm's execHook, v3.22.0 pkg/action/hooks.go)
// and Kustomization hooks: the delete policies, create, and the wait until it is done.
import type { Impersonation, KubeClient, KubeObject } from '@mooring/runtime';
import {
  apiMessage,
  createObject,
  deleteObject,
  type HookObject,
  type ObjectCallOptions,
  readObject,
} from './hook-objects.ts';
import { HookTimeoutError, waitUntilDone, waitUntilGone } from './hook-wait.ts';

/** Helm's and Argo CD's delete policies, in Helm's spelling. */
export type HookDeletePolicy = 'before-hook-creation' | 'hook-succeeded' | 'hook-failed';

/** One hook ready to run: its object and the delete policies it carries. */
export interface HookStep {
  object: HookObject;
  policies: readonly HookDeletePolicy[];
}

export interface HookCallOptions {
  client: KubeClient;
  /** The owner's service account: every read and write of a hook's object is made as it. */
  impersonate?: Impersonation;
  /** How long each wait may take (for a hook to complete, for an old one to be deleted). */
  timeoutMs: number;
  /** Aborting stops the run where it is (the promise rejects with the signal's reason); objects stay. */
  signal: AbortSignal;
  /**
   * A live object this says is the same run of the hook (one created for the same revision before a
   * restart) is waited on instead of replaced: a half-run migration is not started twice.
   */
  isSameRun?: (live: KubeObject) => boolean;
}

/** A hook that stopped the run; `started` says whether it got as far as being created. */
export class HookFailure extends Error {
  readonly started: boolean;
  /** It was still running when its wait ran out of time. */
  readonly timedOut: boolean;
  constructor(message: string, started: boolean, timedOut = false) {
    super(message);
    this.name = 'HookFailure';
    this.started = started;
    this.timedOut = timedOut;
  }
}

/** Aborts win over any failure they caused: the caller cancelled, nothing failed. */
export function rethrowIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}

/** Helm's deleteHookByPolicy: deletes the hook's object if it has `policy`, then waits until it is gone. */
export async function deleteByPolicy(
  step: HookStep,
  policy: HookDeletePolicy,
  opts: HookCallOptions,
): Promise<void> {
  // Helm never deletes a CRD hook: that would garbage-collect every object of the kind.
  if (step.object.object.kind === 'CustomResourceDefinition') return;
  if (!step.policies.includes(policy)) return;
  const calls: ObjectCallOptions = opts;
  await deleteObject(step.object, calls);
  await waitUntilGone(step.object, { ...calls, timeoutMs: opts.timeoutMs });
}

/** Creates one hook's object (after before-hook-creation) and waits for it; throws HookFailure. */
export async function runOneHook(step: HookStep, opts: HookCallOptions): Promise<void> {
  let resumed = false;
  try {
    if (opts.isSameRun) {
      const live = await readObject(step.object, opts);
      resumed = live !== undefined && opts.isSameRun(live);
    }
    if (!resumed) await deleteByPolicy(step, 'before-hook-creation', opts);
  } catch (err) {
    rethrowIfAborted(opts.signal);
    throw new HookFailure(
      `could not delete the previous one (before-hook-creation): ${apiMessage(err)}`,
      false,
    );
  }
  if (!resumed) {
    try {
      await createObject(step.object, opts);
    } catch (err) {
      rethrowIfAborted(opts.signal);
      throw new HookFailure(`could not create it: ${apiMessage(err)}`, true);
    }
  }
  let done: Awaited<ReturnType<typeof waitUntilDone>>;
  try {
    done = await waitUntilDone(step.object, opts);
  } catch (err) {
    rethrowIfAborted(opts.signal);
    throw new HookFailure(apiMessage(err), true, err instanceof HookTimeoutError);
  }
  if (done.state === 'failed') throw new HookFailure(done.message, true);
}
