// Time to render a chart: renderChart (bin/mooring-helm.wasm in Node's WASI, in a worker) against
// a spawned `bin/helm template` (native, v3.22.0). Prints the Markdown section hack/bench.ts
// files into docs/benchmarks.md.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { renderChart } from '../src/index.ts';

const repo = resolve(import.meta.dirname, '../../..');
const HELM = join(repo, 'bin/helm');
const RUNS = 5;
const limits = { timeoutMs: 300_000, memoryBytes: 1 << 30 };
const charts: [string, string][] = [
  ['features (own fixture: library chart, subchart, hooks, schema)', 'shared/helm/test/testdata/features'],
  [
    "Helm's subchart test chart (two subcharts, globals, import-values)",
    'shared/helm/test/testdata/helm-testcharts/subchart',
  ],
];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function helm(chart: string, home: string): Promise<string> {
  return new Promise((done, fail) =>
    execFile(
      HELM,
      ['template', 'bench', chart, '--namespace', 'bench'],
      { env: { HOME: home } },
      (err, out) => (err ? fail(err) : done(out)),
    ),
  );
}

async function time<T>(f: () => Promise<T>): Promise<{ ms: number; out: T }> {
  const t = performance.now();
  const out = await f();
  return { ms: performance.now() - t, out };
}

async function main(): Promise<void> {
  if (!existsSync(HELM)) throw new Error('bin/helm is missing: run `bash hack/lib/build-helm.sh`.');
  const load = loadavg()[0]!.toFixed(2);
  const home = mkdtempSync(join(tmpdir(), 'mooring-helm-bench-'));
  const rows: string[] = [];
  try {
    for (const [title, rel] of charts) {
      const chart = join(repo, rel);
      const render = () => renderChart({ chartDir: chart, releaseName: 'bench', namespace: 'bench', limits });
      const first = rows.length === 0 ? await time(render) : undefined; // includes compiling the module
      const ours: number[] = [];
      const theirs: number[] = [];
      let same = true;
      for (let i = 0; i < RUNS; i++) {
        const a = await time(render);
        const b = await time(() => helm(chart, home));
        ours.push(a.ms);
        theirs.push(b.ms);
        same &&= a.out === b.out;
      }
      const m = median(ours);
      const h = median(theirs);
      rows.push(
        `| ${title} | ${first ? first.ms.toFixed(0) : '–'} | ${m.toFixed(0)} | ${h.toFixed(0)} | ${(m / h).toFixed(1)}× | ${same ? 'yes' : 'no'} |`,
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  console.log(`## Helm render: renderChart (WebAssembly in WASI) vs bin/helm template

What: wall time to render a chart. renderChart: Helm v3.22.0's engine as bin/mooring-helm.wasm in
a fresh worker per render (chart copy, Go start-up, render); "first" also compiles the module
(cached per process afterwards). bin/helm: a spawned \`helm template\` (native, same Helm), process
start included. Medians of ${RUNS} runs, interleaved. Node ${process.version}, ${process.platform}/${process.arch},
${cpus().length} CPUs, load average ${load} when the run started.

| chart | first render (ms) | renderChart (ms) | helm template (ms) | ratio | same output |
|---|---:|---:|---:|---:|:-:|
${rows.join('\n')}

Reproduce: \`npm run bench -- helm-render\` (needs \`bash hack/lib/build-helm.sh\`).
`);
}

await main();
