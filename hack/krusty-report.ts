// How far Mooring's engine gets on kustomize's own krusty test cases (test/conformance/krusty/).
// Usage: node --import tsx hack/krusty-report.ts [--write] [--head | --engine=<dir>]
// Prints the pass rate per krusty test file and overall, for the case's own options (fifo, the
// harness default) and for the CLI's default order, and counts the excluded cases by reason.
// --write rewrites test/conformance/krusty/known-gaps.json (every failing case with its category
// and first difference) and known-gaps.md (this summary, the excluded cases by name, the gaps).
// --engine=<dir> scores another copy of shared/kustomize (its src/index.ts); --head scores the
// engine as committed at HEAD (extracted to .mooring/krusty-head/), so known-gaps.json can be
// written for the commit while the working tree holds someone's unfinished engine change.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type CaseRecord,
  type Engine,
  type GapCategory,
  hasCliVariant,
  KNOWN_GAPS_JSON,
  KNOWN_GAPS_MD,
  type KnownGaps,
  KRUSTY_MODULE,
  type Outcome,
  readCase,
  readIndex,
  runCase,
} from '../test/conformance/krusty-cases.ts';

interface Row {
  file: string;
  cases: number;
  scored: number;
  pass: number;
  cliChecks: number;
  cliPass: number;
}

const pct = (n: number, d: number): string => (d === 0 ? '–' : `${((100 * n) / d).toFixed(1)}%`);

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The engine to score: the workspace's, HEAD's, or the one in --engine=<dir>. */
async function engine(): Promise<{ engine?: Engine; label: string }> {
  let dir = process.argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length);
  if (process.argv.includes('--head')) {
    // Inside the repository, so its imports (yaml) resolve from the root node_modules.
    dir = join(ROOT, '.mooring/krusty-head');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tar = execFileSync(
      'git',
      ['archive', 'HEAD', 'shared/kustomize/src', 'shared/kustomize/package.json'],
      {
        cwd: ROOT,
        maxBuffer: 64 << 20,
      },
    );
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
    return { engine: await importEngine(join(dir, 'shared/kustomize')), label: `the engine at ${rev}` };
  }
  if (dir) return { engine: await importEngine(dir), label: `the engine in ${dir}` };
  return { label: 'the working tree' };
}

async function importEngine(dir: string): Promise<Engine> {
  return (await import(pathToFileURL(join(dir, 'src/index.ts')).href)) as Engine;
}

async function main(): Promise<number> {
  const write = process.argv.includes('--write');
  const { engine: chosen, label } = await engine();
  const index = readIndex();
  const records: CaseRecord[] = index.cases.map((c) => readCase(c.id));
  const noCase = index.testsWithoutCases;
  const noCaseBy = (n?: string): typeof noCase => noCase.filter((t) => t.needs === n);
  const rows = new Map<string, Row>();
  const gaps: KnownGaps = {};
  const byCategory = new Map<GapCategory, number>();
  const cliByCategory = new Map<GapCategory, number>();
  const excluded = new Map<string, string[]>();
  const needs = new Map<string, string[]>();
  let scored = 0;
  let pass = 0;
  let cliChecks = 0;
  let cliPass = 0;
  const note = (key: string, o: Outcome, tally: Map<GapCategory, number>): void => {
    if (o.kind === 'pass') return;
    gaps[key] = { category: o.kind, first: o.first };
    tally.set(o.kind, (tally.get(o.kind) ?? 0) + 1);
  };
  for (const rec of records) {
    const row = rows.get(rec.file) ?? {
      file: rec.file,
      cases: 0,
      scored: 0,
      pass: 0,
      cliChecks: 0,
      cliPass: 0,
    };
    rows.set(rec.file, row);
    row.cases++;
    for (const n of rec.needs) needs.set(n, [...(needs.get(n) ?? []), rec.id]);
    if (rec.excluded !== undefined) {
      excluded.set(rec.excluded, [...(excluded.get(rec.excluded) ?? []), rec.id]);
      continue;
    }
    row.scored++;
    scored++;
    const fifo = (await runCase(rec, 'fifo', chosen)).outcome;
    if (fifo.kind === 'pass') {
      row.pass++;
      pass++;
    }
    note(rec.id, fifo, byCategory);
    if (hasCliVariant(rec)) {
      row.cliChecks++;
      cliChecks++;
      const cli = (await runCase(rec, 'cli', chosen)).outcome;
      if (cli.kind === 'pass') {
        row.cliPass++;
        cliPass++;
      }
      note(`${rec.id}#cli`, cli, cliByCategory);
    }
  }
  const binary = (v: CaseRecord['binary'], only?: boolean): number =>
    records.filter((r) => r.binary === v && (only === undefined || (r.excluded === undefined) === only))
      .length;
  const cat = (m: Map<GapCategory, number>, c: GapCategory): number => m.get(c) ?? 0;
  const lines: string[] = [];
  lines.push(
    `Source: the krusty tests of ${KRUSTY_MODULE} (kustomize v5.8.0), dumped by hack/gen-krusty-cases.ts; Mooring: ${label}.`,
  );
  lines.push('');
  lines.push(
    `- Go tests: ${index.tests} in ${index.testFiles} files; ${noCase.length} made no build here ` +
      `(helm: ${noCaseBy('helm').length} skipped, no helm binary; plugins: ${noCaseBy('plugins').length} KRM container functions, no docker; ` +
      `other: ${noCaseBy(undefined).length}); not run: ${index.testsNotRun.map((t) => `${t.file} ${t.test}`).join(', ') || 'none'}`,
  );
  lines.push(
    `- cases (Kustomizer.Run calls made by the tests): ${records.length}, from ${rows.size} test files`,
  );
  lines.push(`- scored: ${scored}; excluded: ${records.length - scored}`);
  for (const [reason, ids] of [...excluded].sort((a, b) => b[1].length - a[1].length))
    lines.push(`  - ${reason}: ${ids.length}`);
  lines.push(
    `- needs (a case may need several): ${['plugins', 'remote', 'helm'].map((n) => `${n} ${needs.get(n)?.length ?? 0}`).join(', ')}`,
  );
  const disagree = excluded.get('binary-disagrees')?.length ?? 0;
  lines.push(
    `- bin/kustomize build on each dumped tree (same options as flags) agrees with the Go test's result on ${binary('agrees')} of ${records.length} ` +
      `(differs ${binary('differs')}, errors where Go built ${binary('errors')}, unchecked ${binary('unchecked')}); ` +
      `of the ${scored + disagree} cases that need nothing and whose test passed, ${scored} agree and are scored`,
  );
  lines.push(
    `- Mooring, case options (input order as \`sortOptions: {order: fifo}\`): ${pass} of ${scored} pass (${pct(pass, scored)})`,
  );
  lines.push(
    `  - wrong output with exit 0: ${cat(byCategory, 'wrong-output')}; accepted where kustomize errors: ${cat(byCategory, 'accepted-but-kustomize-errors')}; ` +
      `refused: ${cat(byCategory, 'refused')}; crashed (not a KustomizeError): ${cat(byCategory, 'crashed')}`,
  );
  lines.push(
    `- Mooring, CLI-default order (legacy), on the ${cliChecks} cases whose options say input order: ${cliPass} pass (${pct(cliPass, cliChecks)})`,
  );
  lines.push(
    `  - wrong output with exit 0: ${cat(cliByCategory, 'wrong-output')}; accepted where kustomize errors: ${cat(cliByCategory, 'accepted-but-kustomize-errors')}; ` +
      `refused: ${cat(cliByCategory, 'refused')}; crashed: ${cat(cliByCategory, 'crashed')}`,
  );
  const table: string[] = [
    '| test file | cases | scored | pass (fifo) | % | pass (CLI order) |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of [...rows.values()].sort((a, b) => a.file.localeCompare(b.file)))
    table.push(
      `| ${r.file} | ${r.cases} | ${r.scored} | ${r.pass} | ${pct(r.pass, r.scored)} | ${r.cliChecks ? `${r.cliPass}/${r.cliChecks}` : '–'} |`,
    );
  console.log(lines.join('\n'));
  console.log('');
  console.log(table.join('\n'));
  if (write) {
    const sorted = Object.fromEntries(Object.entries(gaps).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(KNOWN_GAPS_JSON, `${JSON.stringify(sorted, null, 2)}\n`);
    const md: string[] = [
      '# krusty conformance: known gaps',
      '',
      'Generated by `node --import tsx hack/krusty-report.ts --write`; do not edit by hand.',
      '`test/conformance/krusty.test.ts` fails on a scored case that fails and is not listed in',
      '`known-gaps.json`, on a listed one that passes, and on one whose category changed.',
      '',
      '## Summary',
      '',
      ...lines,
      '',
      ...table,
      '',
      '## Excluded cases',
      '',
      ...[...excluded].flatMap(([reason, ids]) => [
        `### ${reason} (${ids.length})`,
        '',
        ...ids.map((id) => `- \`${id}\``),
        '',
      ]),
      `### Go tests that made no build (${noCase.length})`,
      '',
      ...noCase.map(
        (t) =>
          `- \`${t.file} ${t.test}\`: ${t.result}${t.needs ? `, needs ${t.needs}` : ''}${t.skip ? ` (${t.skip})` : ''}`,
      ),
      '',
      '## Gaps',
      '',
      'Categories: `wrong-output` (Mooring builds, the output differs), `refused` (Mooring refuses what',
      'kustomize builds), `accepted-but-kustomize-errors`, `crashed` (an error other than KustomizeError).',
      'A `#cli` suffix is the comparison in the CLI-default order.',
      '',
      '| case | category | first difference |',
      '|---|---|---|',
      ...Object.entries(sorted).map(
        ([id, g]) => `| \`${id}\` | ${g.category} | ${g.first.replace(/\|/g, '\\|').replace(/`/g, "'")} |`,
      ),
      '',
    ];
    writeFileSync(KNOWN_GAPS_MD, md.join('\n'));
    console.log(`\nwrote ${Object.keys(sorted).length} gaps to known-gaps.json and known-gaps.md`);
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
