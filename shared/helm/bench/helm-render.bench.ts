// Time to render each vendored public chart with its default values: a spawned `bin/helm template`
// (native, v3.22.0) against renderChart (bin/mooring-helm.wasm in Node's WASI), cold (the first
// render in a fresh pool: worker, instantiation, Go runtime and Helm init) and warm (a renderer
// that has rendered before). Prints the Markdown section hack/bench.ts files into
// docs/benchmarks.md.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HelmRendererPool, prewarmRenderers, renderChart } from '../src/index.ts';

const repo = resolve(import.meta.dirname, '../../..');
const HELM = join(repo, 'bin/helm');
const CHARTS = join(repo, 'shared/helm/test/testdata/public-charts');
const RUNS = 7;
// V8 tiers a wasm function up to optimised code once it has run enough: kserve-resources, the
// chart with most YAML parsing and templating, took 160-200 ms for its first ten or so renders in
// a process and 105-125 ms after (this machine, load 1.5); 3 passes left it half-tiered.
const WARM_UP_PASSES = 12;
const limits = { timeoutMs: 300_000, memoryBytes: 1 << 30 };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// Generated key material (the nginx chart's default self-signed certificate) differs per run.
const maskGenerated = (out: string): string =>
  out.replace(/^( {2}[\w.-]+: )LS0tLS1CRUdJTi[A-Za-z0-9+/=]*$/gm, '$1<generated>');

function helm(chart: string, home: string): Promise<string> {
  return new Promise((done, fail) =>
    execFile(
      HELM,
      ['template', 'bench', chart, '--namespace', 'bench'],
      { env: { HOME: home }, maxBuffer: 64 << 20 },
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
  // Compiling the 81 MB module happens once per process; timed on its own.
  const compile = await time(() =>
    prewarmRenderers(limits, { pool: new HelmRendererPool({ size: 1 }), count: 0 }),
  );
  const first = await time(async () => {
    const pool = new HelmRendererPool({ size: 1 });
    await prewarmRenderers(limits, { pool });
    pool.close();
  });
  // V8 compiles the module with its baseline compiler and tiers hot functions up to its optimising
  // one as they run; the tiered code is the process's, shared by every renderer. An operator that
  // has rendered charts before runs the tiered code, so "warm" is measured after a warm-up pass.
  const names = readdirSync(CHARTS).sort();
  const warmUp = await time(async () => {
    const pool = new HelmRendererPool({ size: 1 });
    for (let pass = 0; pass < WARM_UP_PASSES; pass++)
      for (const name of names)
        await renderChart({
          chartDir: join(CHARTS, name, name),
          releaseName: 'bench',
          namespace: 'bench',
          limits,
          pool,
        });
    pool.close();
  });
  try {
    for (const name of names) {
      const chartDir = join(CHARTS, name, name);
      const pool = new HelmRendererPool({ size: 1 });
      const render = () => renderChart({ chartDir, releaseName: 'bench', namespace: 'bench', limits, pool });
      const cold = await time(render);
      const warm: number[] = [];
      const native: number[] = [];
      let same = true;
      for (let i = 0; i < RUNS; i++) {
        const a = await time(render);
        const b = await time(() => helm(chartDir, home));
        warm.push(a.ms);
        native.push(b.ms);
        same &&= maskGenerated(a.out) === maskGenerated(b.out);
      }
      // Renders one right after another leave the renderer no idle time to make keys ahead.
      const backToBack: number[] = [];
      for (let i = 0; i < RUNS; i++) backToBack.push((await time(render)).ms);
      pool.close();
      const w = median(warm);
      const h = median(native);
      rows.push(
        `| ${name} | ${h.toFixed(0)} | ${cold.ms.toFixed(0)} | ${w.toFixed(0)} | ${(w / h).toFixed(2)} | ${median(backToBack).toFixed(0)} | ${same ? 'yes' : 'no'} |`,
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  console.log(`## Helm render: bin/helm template vs renderChart, cold and warm

What: wall time to render each vendored public chart (shared/helm/test/testdata/public-charts)
with its default values. helm template: a spawned \`bin/helm template\` (native, Helm v3.22.0),
process start included. Mooring cold: the first render in a fresh pool (worker thread,
instantiation, Go runtime and Helm init, reading the chart, render); Mooring warm: a renderer that
has rendered this chart before, so it keeps the chart loaded and its values schema compiled (the
chart's files are still read and hashed each render, to know it is the same chart; then one
exported call), measured after ${WARM_UP_PASSES} untimed passes over all
charts (${(warmUp.ms / 1000).toFixed(1)} s), once V8 has tiered the module's hot functions up to optimised
code as it does in a running operator. Warm and helm are medians of ${RUNS} runs,
interleaved, so the renderer is idle while helm runs, as an operator's renderer is between
renders: a chart that generates certificates (apache, nginx) then finds its RSA keys made
ahead (shared/helm/src/rsa-key-reserve.mjs). "Back to back" is the median of ${RUNS} more warm
renders one right after another, with no idle time between them for that.
"Same output" compares them byte for byte (the nginx chart's generated certificate
masked). Once per process and not in the table: compiling the module, ${compile.ms.toFixed(0)} ms;
the first renderer's start after that, ${first.ms.toFixed(0)} ms.
Node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs, load average ${load} when the run started.

| chart | helm template (ms) | Mooring cold (ms) | Mooring warm (ms) | warm / helm | warm, back to back (ms) | same output |
|---|---:|---:|---:|---:|---:|:-:|
${rows.join('\n')}

Reproduce: \`npm run bench -- helm\` (needs \`bash hack/lib/build-helm.sh\`).
`);
}

await main();
