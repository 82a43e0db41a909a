// How `mooring build` compares with the Go `kustomize build` on every kustomization folder of real
// public repositories.
// Usage: node --import tsx hack/realworld-report.ts <root> [--json=<file>] [--only=<substring>] [--diffs=<n>] [--no-helm] [--operator]
// <root> holds one folder per repository (its files at one commit, e.g. `git archive HEAD | tar -x`),
// each with a `.realworld-source` file naming `repository:` and `commit:`. Every folder with a
// kustomization.yaml/.yml/Kustomization is built by bin/kustomize (no network: a remote base fails
// and is recorded as kustomize's error) and by the CLI's renderDirectory, and classified: identical,
// both-error, different, mooring-refused (kustomize builds it) or mooring-accepted (kustomize
// refuses it). A folder whose kustomization has helmCharts: is built with kustomize --enable-helm
// and bin/helm (mooring build always renders charts) and counted apart as well; --no-helm sets
// those folders aside without building them.
// Prints Markdown: a table per repository, totals, the refusal causes, and the differences with a
// short diff. --json writes every folder's verdict, to compare two runs. --operator builds each folder
// as the Kustomization operator does (load restrictor off, files confined to the repository's
// folder) and kustomize with --load-restrictor LoadRestrictionsNone.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  type BuildResult,
  kustomizationDirs,
  kustomizeBuild,
  mooringBuild,
  operatorBuild,
  reasonOf,
  shortDiff,
  usesHelmCharts,
  VERDICTS,
  type Verdict,
  verdictOf,
} from '../test/conformance/realworld.ts';

interface FolderResult {
  repo: string;
  path: string;
  verdict: Verdict | 'helm (not built)';
  helm: boolean;
  go?: string;
  mooring?: string;
  diff?: string;
}

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function source(repoDir: string): { repository: string; commit: string } {
  let text = '';
  try {
    text = readFileSync(join(repoDir, '.realworld-source'), 'utf8');
  } catch {
    // unnamed: the table says so
  }
  const field = (k: string): string => text.match(new RegExp(`^${k}:\\s*(\\S+)`, 'm'))?.[1] ?? '?';
  return { repository: field('repository'), commit: field('commit') };
}

const pct = (n: number, d: number): string => (d === 0 ? '–' : `${Math.round((100 * n) / d)} %`);

async function main(): Promise<void> {
  const root = process.argv.slice(2).find((a) => !a.startsWith('--'));
  if (!root) throw new Error('usage: hack/realworld-report.ts <root> [--json=<file>] [--only=<substring>]');
  const only = option('only');
  const noHelm = process.argv.includes('--no-helm');
  const asOperator = process.argv.includes('--operator');
  const maxDiffs = Number(option('diffs') ?? 40);
  const repos = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const results: FolderResult[] = [];
  const sources = new Map<string, { repository: string; commit: string }>();
  for (const repo of repos) {
    const repoDir = join(root, repo);
    sources.set(repo, source(repoDir));
    const dirs = kustomizationDirs(repoDir).filter((d) => !only || d.includes(only));
    for (const [i, dir] of dirs.entries()) {
      const path = relative(repoDir, dir) || '.';
      process.stderr.write(`realworld: ${repo} ${i + 1}/${dirs.length} ${path}\n`);
      const helm = usesHelmCharts(dir);
      if (helm && noHelm) {
        results.push({ repo, path, verdict: 'helm (not built)', helm });
        continue;
      }
      const go = await kustomizeBuild(dir, asOperator);
      const mooring = asOperator ? await operatorBuild(repoDir, dir) : await mooringBuild(dir);
      const verdict = verdictOf(go, mooring);
      const text = (r: BuildResult): string => (r.ok ? '' : reasonOf(r.error, dir));
      const row: FolderResult = { repo, path, verdict, helm };
      if (!go.ok) row.go = text(go);
      if (!mooring.ok) row.mooring = text(mooring);
      if (verdict === 'different' && go.ok && mooring.ok) row.diff = shortDiff(go.output, mooring.output);
      results.push(row);
    }
  }
  const jsonFile = option('json');
  if (jsonFile)
    writeFileSync(
      jsonFile,
      `${JSON.stringify({ sources: Object.fromEntries(sources), results }, null, 2)}\n`,
    );
  console.log(report(results, sources, maxDiffs));
}

function count(rows: FolderResult[], v: FolderResult['verdict']): number {
  return rows.filter((r) => r.verdict === v).length;
}

function report(
  results: FolderResult[],
  sources: Map<string, { repository: string; commit: string }>,
  maxDiffs: number,
): string {
  const columns: FolderResult['verdict'][] = [...VERDICTS];
  if (results.some((r) => r.verdict === 'helm (not built)')) columns.push('helm (not built)');
  const out: string[] = [];
  out.push(`| repository | commit | folders | ${columns.join(' | ')} |`);
  out.push(`|---|---|---:|${columns.map(() => '---:').join('|')}|`);
  const line = (name: string, commit: string, rows: FolderResult[], withPct: boolean): string => {
    const cells = columns.map((v) =>
      withPct ? `${count(rows, v)} (${pct(count(rows, v), rows.length)})` : count(rows, v),
    );
    return `| ${name} | ${commit} | ${rows.length} | ${cells.join(' | ')} |`;
  };
  for (const [repo, src] of sources) {
    const rows = results.filter((r) => r.repo === repo);
    if (rows.length > 0)
      out.push(line(src.repository.replace('https://github.com/', ''), src.commit.slice(0, 12), rows, false));
  }
  out.push(line('**total**', '', results, true));
  const helmRows = results.filter((r) => r.helm);
  if (helmRows.length > 0) out.push(line('of which helmCharts: folders', '', helmRows, false));
  const built = results.filter((r) => r.verdict !== 'helm (not built)');
  const good = count(built, 'identical') + count(built, 'both-error');
  out.push('');
  out.push(
    `${good} of ${built.length} built folders (${pct(good, built.length)}) match kustomize ` +
      '(byte-identical output, or an error where kustomize errors).',
  );
  const causes = new Map<string, string[]>();
  for (const r of results.filter(
    (r) => r.verdict === 'mooring-refused' || r.verdict === 'mooring-accepted',
  )) {
    const cause = r.verdict === 'mooring-accepted' ? `accepted; kustomize: ${r.go}` : (r.mooring ?? '?');
    causes.set(cause, [...(causes.get(cause) ?? []), `${r.repo}/${r.path}`]);
  }
  if (causes.size > 0) {
    out.push('', '### Refused by Mooring, or accepted where kustomize refuses', '');
    for (const [cause, where] of [...causes].sort((a, b) => b[1].length - a[1].length))
      out.push(
        `- ${where.length}× ${cause}\n  - ${where.slice(0, 5).join('\n  - ')}${where.length > 5 ? '\n  - …' : ''}`,
      );
  }
  const diffs = results.filter((r) => r.verdict === 'different');
  if (diffs.length > 0) {
    out.push('', '### Different output', '');
    for (const r of diffs.slice(0, maxDiffs))
      out.push(`#### ${r.repo}/${r.path}`, '', '```diff', r.diff ?? '', '```', '');
    if (diffs.length > maxDiffs) out.push(`… and ${diffs.length - maxDiffs} more (--diffs=<n>)`);
  }
  return out.join('\n');
}

await main();
