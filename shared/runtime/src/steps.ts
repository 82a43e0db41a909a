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

/**
 * Runs `steps` in order over `state`; returns the lowest requeue asked for, if any. `onStep` hears
 * each step's name as it starts, `onStepEnd` how long it took (also when it threw).
 */
export async function runSteps<S>(
  steps: readonly Step<S>[],
  state: S,
  onStep?: (name: string) => void,
  onStepEnd?: (name: string, seconds: number) => void,
): Promise<StepOutcome> {
  let requeueAfterMs: number | undefined;
  for (const s of steps) {
    onStep?.(s.name);
    const started = performance.now();
    let outcome: StepOutcome | undefined;
    try {
      outcome = await s.run(state);
    } finally {
      onStepEnd?.(s.name, (performance.now() - started) / 1000);
    }
    const asked = outcome?.requeueAfterMs;
    if (asked !== undefined && (requeueAfterMs === undefined || asked < requeueAfterMs))
      requeueAfterMs = asked;
  }
  return requeueAfterMs === undefined ? {} : { requeueAfterMs };
}

/** The `onStepEnd` of `runSteps` that records each step's time as `kind`'s, when metrics are on. */
export function stepTimer(
  metrics: { observeStep?(kind: string, step: string, seconds: number): void } | undefined,
  kind: string,
): ((name: string, seconds: number) => void) | undefined {
  const observe = metrics?.observeStep?.bind(metrics);
  return observe && ((name, seconds) => observe(kind, name, seconds));
}
