// The plan as the terminal shows it: one block per rendered applier, diffs inline.
import type { Plan } from './make-plan.ts';
import { applierName, countsLine, planHeadline, short, warnings } from './plan-summary.ts';

export function planAsText(plan: Plan): string {
  const lines: string[] = [
    `Plan of ${short(plan.head.sha)} (${plan.head.ref}) against ${short(plan.base.sha)} (${plan.base.ref}): ${plan.changedFiles.length} files changed`,
    `This repository: ${plan.source}`,
    '',
  ];
  for (const a of plan.appliers) {
    const mark = a.error ? '✗' : a.changes.length || a.lifecycle !== 'kept' ? '►' : '✔';
    lines.push(`${mark} ${applierName(a)} (${a.file}): ${a.error ? 'not rendered' : countsLine(a)}`);
    for (const w of warnings(a)) lines.push(`  ! ${w}`);
    for (const n of a.notes) lines.push(`  · ${n}`);
    for (const c of a.changes) lines.push(`  ${c.change} ${c.id}`, c.patch.trimEnd(), '');
    if (a.live) {
      lines.push(
        `  against the cluster (server-side dry run): ${a.live.changes.length} objects would change`,
      );
      for (const c of a.live.changes) lines.push(`  ${c.change} ${c.id}`, c.patch.trimEnd(), '');
    }
  }
  if (plan.unaffected.length)
    lines.push(`Not affected by the change (not rendered): ${plan.unaffected.join(', ')}`);
  if (plan.otherSources.length)
    lines.push(`Reading another source (not planned): ${plan.otherSources.join(', ')}`);
  for (const u of plan.unreadable)
    lines.push(`! ${u.file} is not valid YAML (${u.error}): what it declares is not planned`);
  lines.push('', `Summary: ${planHeadline(plan)}.`);
  return `${lines.join('\n')}\n`;
}
