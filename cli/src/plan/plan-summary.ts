// Sentences about a plan that the text and Markdown forms share, so they say the same thing.
import type { ApplierPlan, Plan } from './make-plan.ts';

export const applierName = (a: ApplierPlan): string => `${a.kind} ${a.namespace}/${a.name}`;

export const short = (sha: string): string => sha.slice(0, 12);

export function countsLine(a: ApplierPlan): string {
  const { added, changed, deleted } = a.counts;
  if (!added && !changed && !deleted) return 'no changes';
  return `${added} added, ${changed} changed, ${deleted} deleted`;
}

/** Why the applier is noteworthy beyond its counts: a failure, the budget, a lifecycle change. */
export function warnings(a: ApplierPlan): string[] {
  const out: string[] = [];
  if (a.error) out.push(`render failed: ${a.error}`);
  if (a.baseError)
    out.push(`the base revision did not render (${a.baseError}): every object counts as added`);
  if (a.lifecycle === 'added') out.push(`new ${a.kind}, declared in ${a.file}`);
  if (a.lifecycle === 'removed')
    out.push(
      a.prune
        ? `no longer declared (was in ${a.file}): deleting it deletes its objects`
        : `no longer declared (was in ${a.file}); prune is off, so its objects stay`,
    );
  const b = a.budget;
  if (b?.exceeded)
    out.push(
      `deletion budget exceeded: ${b.deletions} deletions, ${b.fromSpec ? 'spec.deletionBudget' : 'the default budget'} ${b.budget} allows ${b.allowed}: the operator deletes nothing until 'mooring approve prune ks/${a.name} -n ${a.namespace}' or a higher budget`,
    );
  if (!a.prune && a.counts.deleted && a.lifecycle === 'kept')
    out.push('prune is off: the deleted objects stay in the cluster');
  if (a.live?.error) out.push(`server-side dry run failed: ${a.live.error}`);
  return out;
}

/** The one-line outcome of the whole plan, also the commit status's description. */
export function planHeadline(plan: Plan): string {
  const failed = plan.appliers.filter((a) => a.error).length;
  const changed = plan.appliers.filter(
    (a) => !a.error && (a.changes.length || a.lifecycle !== 'kept'),
  ).length;
  const over = plan.appliers.filter((a) => a.budget?.exceeded).length;
  const parts = [
    `${plan.appliers.length} rendered`,
    `${changed} with changes`,
    ...(failed ? [`${failed} failed`] : []),
    ...(over ? [`${over} over the deletion budget`] : []),
    `${plan.unaffected.length} not affected`,
  ];
  return parts.join(', ');
}

/** The commit status of a plan: failure when a render failed or a budget is exceeded. */
export function planState(plan: Plan): 'success' | 'failure' {
  return plan.appliers.some((a) => a.error || a.budget?.exceeded || a.live?.error) ? 'failure' : 'success';
}
