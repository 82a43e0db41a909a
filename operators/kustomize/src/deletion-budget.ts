// spec.deletionBudget: how many objects one reconcile's prune may delete before a person has to
// say yes. Pure functions over plain data; the prune step does the I/O.

/** A budget as written: a count, or a percentage of the inventory. */
export type DeletionBudget = { count: number } | { percent: number };

const PERCENT = /^([0-9]{1,3})%$/;

/** Parses `5` or `'50%'` (0-100); throws a sentence naming the value otherwise. */
export function parseDeletionBudget(value: number | string): DeletionBudget {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return { count: value };
  } else {
    const m = PERCENT.exec(value.trim());
    if (m && Number(m[1]) <= 100) return { percent: Number(m[1]) };
    if (/^[0-9]+$/.test(value.trim())) return { count: Number(value.trim()) };
  }
  throw new Error(
    `deletion budget ${JSON.stringify(value)} is neither a count of at least 0 nor a percentage from '0%' to '100%'`,
  );
}

/**
 * How many objects the budget lets go out of an inventory of `inventorySize`. Percentages round
 * up, so a Kustomization of one object can still rename it under '50%'; '0%' and 0 allow none.
 */
export function deletionAllowance(budget: DeletionBudget, inventorySize: number): number {
  if ('count' in budget) return budget.count;
  return Math.ceil((budget.percent * inventorySize) / 100);
}

export function describeBudget(budget: DeletionBudget): string {
  return 'count' in budget ? `${budget.count}` : `${budget.percent}%`;
}

export type PruneVerdict =
  | { allowed: true; approved: boolean }
  | { allowed: false; allowance: number; message: string };

/** Objects named in a refusal's message; the rest are counted. */
const LISTED_IN_MESSAGE = 10;

/**
 * Whether the prune of `doomed` (what would really be deleted) may go ahead: within the budget, or
 * over it with the approval annotation naming exactly this revision.
 */
export function judgePrune(input: {
  doomed: readonly string[];
  inventorySize: number;
  budget: DeletionBudget;
  revision: string;
  approvedRevision: string | undefined;
  /** `mooring approve prune ks/<name> -n <namespace>`, for the message. */
  approveCommand: string;
}): PruneVerdict {
  const allowance = deletionAllowance(input.budget, input.inventorySize);
  if (input.doomed.length <= allowance) return { allowed: true, approved: false };
  if (input.approvedRevision !== undefined && input.approvedRevision === input.revision)
    return { allowed: true, approved: true };
  const listed = input.doomed.slice(0, LISTED_IN_MESSAGE).join(', ');
  const more =
    input.doomed.length > LISTED_IN_MESSAGE ? ` and ${input.doomed.length - LISTED_IN_MESSAGE} more` : '';
  const pct = 'percent' in input.budget ? ` (${input.budget.percent}% of ${input.inventorySize})` : '';
  return {
    allowed: false,
    allowance,
    message:
      `revision '${input.revision}' would delete ${input.doomed.length} of ${input.inventorySize} objects, ` +
      `over the deletion budget of ${allowance}${pct}: ${listed}${more}; nothing was deleted. ` +
      `Approve this revision's prune with '${input.approveCommand}' or raise spec.deletionBudget`,
  };
}
