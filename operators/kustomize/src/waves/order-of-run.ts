// The apply order of one reconcile, kept beside its KustomizationRun (set by the step that plans it,
// read by apply and the hook steps) without widening the run's shared type.
import type { KustomizationRun } from '../kustomization-run.ts';
import type { ApplyOrder } from './plan-apply-order.ts';

const orders = new WeakMap<KustomizationRun, ApplyOrder>();

export function setApplyOrder(run: KustomizationRun, order: ApplyOrder): void {
  orders.set(run, order);
}

/** The run's order; a run that skipped planning (a test driving apply alone) applies the render as one wave. */
export function applyOrderOf(run: KustomizationRun): ApplyOrder | undefined {
  return orders.get(run);
}
