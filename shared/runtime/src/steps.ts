/**
 * A reconcile as an ordered list of named steps of one signature, as fluxcd/source-controller
 * writes its reconcilers: each step reads and extends one state object, the loop stops at the
 * first step that throws (the runtime turns the error into conditions), and the lowest requeue any
 * step asks for wins. The list is what docs/architecture.md shows for the kind.
 */
export interface StepOutcome {
  /** Reconcile again this soon, at the latest (the lowest of all steps counts). */
  requeueAfterMs?: number;
}

export interface Step<S> {
  /** Shown in logs and in a failure's context; a verb phrase, e.g. `resolve source`. */
  readonly name: string;
  run(state: S): Promise<StepOutcome | undefined> | StepOutcome | undefined;
}

/** Makes a step from a name and a function, so a list reads as `step('apply', apply)`. */
export function step<S>(name: string, run: Step<S>['run']): Step<S> {
  return { name, run };
}

/** Runs `steps` in order over `state`; returns the lowest requeue asked for, if any. */
export async function runSteps<S>(
  steps: readonly Step<S>[],
  state: S,
  onStep?: (name: string) => void,
): Promise<StepOutcome> {
  let requeueAfterMs: number | undefined;
  for (const s of steps) {
    onStep?.(s.name);
    const outcome = await s.run(state);
    const asked = outcome?.requeueAfterMs;
    if (asked !== undefined && (requeueAfterMs === undefined || asked < requeueAfterMs))
      requeueAfterMs = asked;
  }
  return requeueAfterMs === undefined ? {} : { requeueAfterMs };
}
