// kstatus conditions as pure functions over plain data, summarised the way Flux does it, so
// `kubectl wait --for=condition=Ready`, kstatus and Flux users all read Mooring objects alike.
// The type and reason names come from @mooring/api; this module only decides how they combine.
import { ConditionType, Reason } from '@mooring/api';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition (metav1.Condition). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** What a caller decides; `lastTransitionTime` is derived. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/** These lead the list in this order, so `kubectl get -o yaml` shows the summary first. */
const LEADING: readonly string[] = [ConditionType.Ready, ConditionType.Reconciling, ConditionType.Stalled];

/**
 * Returns `conditions` with `next` set: `lastTransitionTime` moves to `now` only when the status
 * changes, a new type is appended, and Ready, Reconciling, Stalled lead in that order.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionUpdate,
  now: Date,
): Condition[] {
  const list = conditions ?? [];
  const i = list.findIndex((c) => c.type === next.type);
  const previous = list[i];
  const condition: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    ...(next.observedGeneration === undefined ? {} : { observedGeneration: next.observedGeneration }),
    lastTransitionTime:
      previous && previous.status === next.status ? previous.lastTransitionTime : kubeTime(now),
  };
  return ordered(i >= 0 ? list.with(i, condition) : [...list, condition]);
}

/** Returns `conditions` without the condition of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The condition of `type`, if set. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of `type` is set and True. */
export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

/** Reconciled successfully: Ready True; Reconciling and Stalled go, as the work is over. */
export function markReady(
  conditions: readonly Condition[] | undefined,
  reason: string,
  message: string,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const rest = removeCondition(removeCondition(conditions, ConditionType.Reconciling), ConditionType.Stalled);
  return setCondition(rest, update(ConditionType.Ready, 'True', reason, message, generation), now);
}

/**
 * Failed, and a retry may help: Ready False, Stalled goes, and a Reconciling condition still set
 * changes its reason to ProgressingWithRetry (as Flux's finalizeStatus does), so kstatus reads
 * the object as in progress rather than failed.
 */
export function markNotReady(
  conditions: readonly Condition[] | undefined,
  reason: string,
  message: string,
  generation: number | undefined,
  now: Date,
): Condition[] {
  let next = removeCondition(conditions, ConditionType.Stalled);
  const reconciling = getCondition(next, ConditionType.Reconciling);
  if (reconciling?.status === 'True') {
    next = setCondition(next, { ...reconciling, reason: Reason.ProgressingWithRetry }, now);
  }
  return setCondition(next, update(ConditionType.Ready, 'False', reason, message, generation), now);
}

/**
 * Work under way: Reconciling True with `reason`, Ready Unknown (reason Progressing) with the
 * same message; a Stalled condition goes, since this pass re-examines it.
 */
export function markReconciling(
  conditions: readonly Condition[] | undefined,
  reason: string,
  message: string,
  generation: number | undefined,
  now: Date,
): Condition[] {
  let next = removeCondition(conditions, ConditionType.Stalled);
  next = setCondition(next, update(ConditionType.Reconciling, 'True', reason, message, generation), now);
  return setCondition(
    next,
    update(ConditionType.Ready, 'Unknown', Reason.Progressing, message, generation),
    now,
  );
}

/**
 * Not done, and the runtime will look again: Reconciling True with `reconcilingReason`, Ready False
 * with `readyReason`, both carrying `message`; Stalled goes. Used for failures that back off and
 * for waits on a dependency.
 */
export function markRetrying(
  conditions: readonly Condition[] | undefined,
  reconcilingReason: string,
  readyReason: string,
  message: string,
  generation: number | undefined,
  now: Date,
): Condition[] {
  let next = removeCondition(conditions, ConditionType.Stalled);
  next = setCondition(
    next,
    update(ConditionType.Reconciling, 'True', reconcilingReason, message, generation),
    now,
  );
  return setCondition(next, update(ConditionType.Ready, 'False', readyReason, message, generation), now);
}

/** Retrying cannot help (an invalid spec): Stalled True and Ready False with `reason`; Reconciling goes. */
export function markStalled(
  conditions: readonly Condition[] | undefined,
  reason: string,
  message: string,
  generation: number | undefined,
  now: Date,
): Condition[] {
  let next = removeCondition(conditions, ConditionType.Reconciling);
  next = setCondition(next, update(ConditionType.Stalled, 'True', reason, message, generation), now);
  return setCondition(next, update(ConditionType.Ready, 'False', reason, message, generation), now);
}

/** Returns `conditions` without Reconciling. */
export function clearReconciling(conditions: readonly Condition[] | undefined): Condition[] {
  return removeCondition(conditions, ConditionType.Reconciling);
}

/** Returns `conditions` without Stalled. */
export function clearStalled(conditions: readonly Condition[] | undefined): Condition[] {
  return removeCondition(conditions, ConditionType.Stalled);
}

/**
 * Whether two condition lists say the same thing, ignoring order, so a no-op status write can be
 * skipped. Times compare as instants: the API server drops sub-second digits on the way back.
 */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  // Both directions, so a duplicated type on one side cannot mask a missing one.
  return left.length === right.length && covers(left, right) && covers(right, left);
}

/** Whether every condition of `xs` has an equal one of the same type in `ys`. */
function covers(xs: readonly Condition[], ys: readonly Condition[]): boolean {
  return xs.every((x) => {
    const y = getCondition(ys, x.type);
    return (
      y !== undefined &&
      x.status === y.status &&
      x.reason === y.reason &&
      x.message === y.message &&
      x.observedGeneration === y.observedGeneration &&
      sameInstant(x.lastTransitionTime, y.lastTransitionTime)
    );
  });
}

function update(
  type: string,
  status: ConditionStatus,
  reason: string,
  message: string,
  observedGeneration: number | undefined,
): ConditionUpdate {
  return { type, status, reason, message, observedGeneration };
}

/** RFC 3339 to the second, the precision metav1.Time keeps, so a round trip compares equal. */
function kubeTime(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z');
}

function sameInstant(a: string, b: string): boolean {
  if (a === b) return true;
  const ta = Date.parse(a);
  return !Number.isNaN(ta) && ta === Date.parse(b);
}

/** Leading types first in their fixed order; the rest keep their relative order. */
function ordered(conditions: Condition[]): Condition[] {
  const rank = (c: Condition) => {
    const i = LEADING.indexOf(c.type);
    return i < 0 ? LEADING.length : i;
  };
  return conditions.sort((x, y) => rank(x) - rank(y));
}
