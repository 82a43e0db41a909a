// The plan as a pull-request comment: a counts table, then one collapsible section per rendered
// applier with its diffs, each cut at a length a review can take and the whole kept under the
// hosts' comment limits (GitHub's is 65,536 characters).
import type { ApplierPlan, Plan } from './make-plan.ts';
import { applierName, countsLine, planHeadline, short, warnings } from './plan-summary.ts';

/** Marks Mooring's comments, so a later tool can find and replace them. */
export const PLAN_COMMENT_MARKER = '<!-- mooring-plan -->';
export const MAX_DIFF_LINES = 150;
export const MAX_COMMENT_CHARS = 60_000;

const escapeCell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A fenced block whose fence is longer than any backtick run inside it. */
function fenced(text: string, lang: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

function cut(patch: string, maxLines: number): string {
  const lines = patch.trimEnd().split('\n');
  if (lines.length <= maxLines) return lines.join('\n');
  return `${lines.slice(0, maxLines).join('\n')}\n… ${lines.length - maxLines} more lines (run mooring plan locally for the whole diff)`;
}

function result(a: ApplierPlan): string {
  if (a.error) return '❌ render failed';
  if (a.budget?.exceeded) return '⚠️ deletion budget exceeded';
  if (a.live?.error) return '❌ dry run failed';
  if (a.lifecycle !== 'kept') return a.lifecycle === 'added' ? '🆕 new' : '🗑️ removed';
  return a.changes.length ? 'changes' : 'no changes';
}

function section(a: ApplierPlan, maxLines: number): string {
  const out = [
    `<details><summary><b>${applierName(a)}</b>: ${a.error ? 'render failed' : countsLine(a)}</summary>`,
    '',
  ];
  for (const w of warnings(a)) out.push(`> ${w.replaceAll('\n', ' ')}`, '');
  for (const n of a.notes) out.push(`- ${n}`);
  if (a.notes.length) out.push('');
  for (const c of a.changes)
    out.push(`**${c.change}** \`${c.id}\``, '', fenced(cut(c.patch, maxLines), 'diff'), '');
  if (a.live) {
    out.push(`Against the cluster (server-side dry run): ${a.live.changes.length} objects would change`, '');
    for (const c of a.live.changes)
      out.push(`**${c.change}** \`${c.id}\``, '', fenced(cut(c.patch, maxLines), 'diff'), '');
  }
  out.push('</details>', '');
  return out.join('\n');
}

export function planAsMarkdown(plan: Plan, maxChars = MAX_COMMENT_CHARS): string {
  const head = [
    PLAN_COMMENT_MARKER,
    `### Mooring plan: \`${short(plan.head.sha)}\` against \`${short(plan.base.sha)}\``,
    '',
    `${planHeadline(plan)}.`,
    '',
  ];
  if (plan.appliers.length) {
    head.push('| | added | changed | deleted | result |', '|---|---:|---:|---:|---|');
    for (const a of plan.appliers)
      head.push(
        `| ${escapeCell(`${applierName(a)}`)} | ${a.counts.added} | ${a.counts.changed} | ${a.counts.deleted} | ${result(a)} |`,
      );
    head.push('');
  }
  const tail: string[] = [];
  if (plan.unaffected.length)
    tail.push(`Not affected (not rendered): ${plan.unaffected.map((k) => `\`${k}\``).join(', ')}`, '');
  for (const u of plan.unreadable)
    tail.push(`⚠️ \`${u.file}\` is not valid YAML: what it declares is not planned.`, '');
  // Sections shrink (fewer lines per diff, then none) until the comment fits.
  for (const lines of [MAX_DIFF_LINES, 40, 10, 0]) {
    const body = plan.appliers.map((a) => (lines ? section(a, lines) : '')).join('\n');
    const text = [...head, body, ...tail].join('\n');
    if (text.length <= maxChars || lines === 0)
      return lines
        ? text
        : `${[...head, '_Diffs left out: too long for one comment; run mooring plan locally._', '', ...tail].join('\n')}`;
  }
  return head.join('\n');
}
