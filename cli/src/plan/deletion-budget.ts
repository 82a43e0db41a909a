// The deletion budget (issue #23 §2) as a plan applies it: `spec.deletionBudget`, a count or
// 'N%' of the inventory rounded up, else 50 %; the base revision's render stands for the
// inventory, as it is what the cluster got from that revision.

export const DEFAULT_DELETION_BUDGET = '50%';

export interface BudgetCheck {
  /** As written in the spec, or the default. */
  budget: number | string;
  fromSpec: boolean;
  /** Most objects one reconcile may delete. */
  allowed: number;
  deletions: number;
  exceeded: boolean;
}

/** The number of deletions `budget` allows out of `inventory` objects; undefined when it is malformed. */
export function allowedDeletions(budget: number | string, inventory: number): number | undefined {
  if (typeof budget === 'number') return Number.isInteger(budget) && budget >= 0 ? budget : undefined;
  const m = /^(\d{1,3})%$/.exec(budget.trim());
  if (m) {
    const pct = Number(m[1]);
    return pct <= 100 ? Math.ceil((inventory * pct) / 100) : undefined;
  }
  return /^\d+$/.test(budget.trim()) ? Number(budget.trim()) : undefined;
}

/** Checks `deletions` out of `inventory` against the spec's budget (the default when unset or malformed). */
export function checkBudget(
  spec: Record<string, unknown>,
  inventory: number,
  deletions: number,
): BudgetCheck {
  const written = spec.deletionBudget;
  const fromSpec = typeof written === 'number' || typeof written === 'string';
  let budget: number | string = fromSpec ? (written as number | string) : DEFAULT_DELETION_BUDGET;
  let allowed = allowedDeletions(budget, inventory);
  if (allowed === undefined) {
    budget = DEFAULT_DELETION_BUDGET;
    allowed = allowedDeletions(budget, inventory)!;
  }
  return { budget, fromSpec, allowed, deletions, exceeded: deletions > allowed };
}
