// The web UI at scale (issue #18's "Speed" and "stays responsive with 5,000 Mooring objects and
// 50,000 managed objects"): `mooring ui` runs as users start it (its own process, the CLI's
// bundle) against the bench control plane; Debian's chromium opens it. For each scale
// (MOORING_UI_BENCH_SCALES, `<kustomizations>x<objects each>`, default 1000x4,5000x10) the
// namespace holds that many Kustomizations, each with a Ready status listing its objects in its
// inventory, and the objects themselves (ConfigMaps, created for real). Statuses are written
// straight to the status subresource (no operators), so the figures are the UI's own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { KubeClient } from '@mooring/runtime';
import { chromium, type Page } from 'playwright-core';
import { locationAt, repoRoot, up } from '../../hack/lib/control-plane.ts';
import { removeNamespace } from '../../hack/lib/remove-namespace.ts';
import { CHROMIUM_ARGS } from '../test/ui-browser.ts';

const SCALES = (process.env.MOORING_UI_BENCH_SCALES ?? '1000x4,5000x10').split(',').map((s) => {
  const [k, o] = s.split('x').map(Number);
  if (!k || !o) throw new Error(`MOORING_UI_BENCH_SCALES: ${s} is not <kustomizations>x<objects>`);
  return { kustomizations: k, objectsEach: o };
});
const PAINTS = 7;
const CHANGES = 40;
const CHROMIUM = process.env.MOORING_CHROMIUM ?? '/usr/bin/chromium';
const MANAGER = 'mooring-ui-bench';

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
const plane = await up(locationAt(join(repoRoot, '.mooring/bench-control-plane')));
const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 500, burst: 1000 });

const ready = (status: string, reason: string, message: string) => [
  {
    type: 'Ready',
    status,
    reason,
    message,
    lastTransitionTime: new Date().toISOString(),
    observedGeneration: 1,
  },
];
const name = (i: number): string => `app-${String(i).padStart(4, '0')}`;

// In parallel batches: the set-up is not what is measured.
async function inBatches(n: number, fn: (i: number) => Promise<unknown>, size = 50): Promise<void> {
  for (let start = 0; start < n; start += size)
    await Promise.all(Array.from({ length: Math.min(size, n - start) }, (_, k) => fn(start + k)));
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) =>
  sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface Figures {
  serverReadyMs: number;
  paintP50: number;
  paintP95: number;
  pageKiB: number;
  searchMs: number;
  graphMs: number;
  graphNote: string;
  graphLongestTaskMs: number;
  changeP50: number;
  changeP95: number;
  overviewLongestTaskMs: number;
  rssIdle: number;
  rssAfter: number;
}

// The longest task the page's main thread ran since the last call (chromium's Long Tasks API):
// what a user feels as a page that does not answer.
async function longestTaskSince(page: Page): Promise<number> {
  return page.evaluate<number>(
    '(() => { const l = window.__longest ?? 0; window.__longest = 0; return l; })()',
  );
}

async function runScale(kustomizations: number, objectsEach: number): Promise<Figures> {
  const ns = `ui-bench-${process.pid}-${kustomizations}`;
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const writeStatus = (i: number, status: string, reason: string, message: string) =>
    client.applyStatus(
      {
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        metadata: { name: name(i), namespace: ns },
        status: {
          observedGeneration: 1,
          lastAppliedRevision: 'main@sha1:0123456789abcdef0123456789abcdef01234567',
          conditions: ready(status, reason, message),
          inventory: {
            entries: Array.from({ length: objectsEach }, (_, k) => ({
              id: `${ns}_${name(i)}-cm-${k}__ConfigMap`,
              v: 'v1',
            })),
          },
        },
      },
      { fieldManager: MANAGER, force: true },
    );
  let server: ReturnType<typeof spawn> | undefined;
  const profile = mkdtempSync(join(tmpdir(), 'mooring-ui-bench-'));
  try {
    await client.create({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: 'platform', namespace: ns },
      spec: { url: 'https://example.invalid/platform.git', interval: '1h', ref: { branch: 'main' } },
    });
    await inBatches(kustomizations, (i) =>
      client.create({
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        metadata: { name: name(i), namespace: ns },
        spec: {
          sourceRef: { kind: 'GitRepository', name: 'platform' },
          path: './',
          interval: '1h',
          prune: true,
        },
      }),
    );
    await inBatches(kustomizations, (i) =>
      writeStatus(i, 'True', 'ReconciliationSucceeded', 'Applied revision: main@sha1:0123456'),
    );
    // The managed objects, for real: the cluster holds what the inventories name.
    await inBatches(
      kustomizations * objectsEach,
      (j) =>
        client.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${name(Math.floor(j / objectsEach))}-cm-${j % objectsEach}`, namespace: ns },
          data: { key: 'value' },
        }),
      100,
    );
    process.stderr.write(
      `ui bench: ${ns} holds ${kustomizations} Kustomizations and ${kustomizations * objectsEach} ConfigMaps\n`,
    );

    const started = Date.now();
    server = spawn(
      process.execPath,
      [join(repoRoot, 'cli/bin/mooring.js'), 'ui', '--port', '0', '--no-open', '-n', ns],
      { env: { ...process.env, KUBECONFIG: plane.kubeconfig }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^mooring ui: (\S+)$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      server!.on('exit', (code) => reject(new Error(`mooring ui exited ${code}`)));
    });
    const serverReadyMs = Date.now() - started;
    const pid = server.pid!;
    const rssMb = (): number =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const rssIdle = rssMb();

    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    try {
      // In the page (a string: this file is compiled for Node, not the DOM).
      await context.addInitScript({
        content: `window.__longest = 0;
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
          }).observe({ type: 'longtask', buffered: true });`,
      });
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(300_000);
      // First meaningful paint: navigation to the first page of rows on screen (the page's own clock).
      const paints: number[] = [];
      await page.goto(url);
      for (let i = 0; i < PAINTS; i++) {
        await page.reload();
        await page.locator('tbody tr').first().waitFor();
        paints.push(await page.evaluate(() => performance.now()));
      }
      const payload = await page.evaluate(
        async () => (await (await fetch('/api/objects?limit=100')).text()).length,
      );
      // Server-side search: one word over every object, answered as one page.
      const searchMs = await page.evaluate(
        async (word) => {
          const t0 = performance.now();
          await (await fetch(`/api/objects?search=${word}&limit=100`)).json();
          return performance.now() - t0;
        },
        name(kustomizations - 1),
      );

      // The graph of the whole namespace: navigation to its nodes on screen, the longest task meanwhile.
      await longestTaskSince(page);
      const g0 = await page.evaluate(() => performance.now());
      await page.evaluate(`location.hash = '#/graph'`);
      await page.locator('#graph g.node').first().waitFor();
      const graphMs = (await page.evaluate(() => performance.now())) - g0;
      const graphNote = (await page.locator('main p.muted').first().textContent()) ?? '';
      const graphLongestTaskMs = await longestTaskSince(page);

      // Change to page: a status write on the API server until its row shows failed (failing first).
      await page.evaluate(`location.hash = '#/'`);
      await page.locator('tbody tr').first().waitFor();
      await longestTaskSince(page);
      const latencies: number[] = [];
      for (let c = 0; c < CHANGES; c++) {
        const i = (c * 37) % kustomizations;
        const row = page.locator(`tr[data-key="Kustomization/${ns}/${name(i)}"][data-state="failed"]`);
        const t0 = performance.now();
        await writeStatus(i, 'False', 'BuildFailed', `bench change ${c}`);
        await row.waitFor({ timeout: 120_000 }).catch(async (err: Error) => {
          // What the page and the server say, so a stuck run can be told from a slow one.
          const live = await page.locator('#live').textContent();
          const shown = await page.locator('tbody tr[data-state="failed"]').count();
          const served = await page.evaluate(async () => (await fetch('/api/objects?state=failed')).text());
          throw new Error(
            `${err.message}\nlive: ${live}; failed rows shown: ${shown}; served: ${served.slice(0, 300)}`,
          );
        });
        latencies.push(performance.now() - t0);
      }
      const overviewLongestTaskMs = await longestTaskSince(page);
      return {
        serverReadyMs,
        paintP50: pct(paints, 50),
        paintP95: pct(paints, 95),
        pageKiB: payload / 1024,
        searchMs,
        graphMs,
        graphNote,
        graphLongestTaskMs,
        changeP50: pct(latencies, 50),
        changeP95: pct(latencies, 95),
        overviewLongestTaskMs,
        rssIdle,
        rssAfter: rssMb(),
      };
    } finally {
      await context.close();
    }
  } finally {
    server?.kill('SIGINT');
    rmSync(profile, { recursive: true, force: true });
    await removeNamespace(client, ns, [
      `/api/v1/namespaces/${ns}/configmaps`,
      `/apis/${KUSTOMIZE_API_VERSION}/namespaces/${ns}/kustomizations`,
      `/apis/${SOURCE_API_VERSION}/namespaces/${ns}/gitrepositories`,
    ]);
  }
}

const results: { scale: (typeof SCALES)[number]; figures: Figures }[] = [];
try {
  for (const scale of SCALES) {
    results.push({ scale, figures: await runScale(scale.kustomizations, scale.objectsEach) });
    process.stderr.write(`ui bench: ${JSON.stringify(results.at(-1))}\n`);
  }
} finally {
  client.close();
}

const n = (x: number): string => x.toLocaleString('en');
const ms = (x: number): string => `${n(Math.round(x))} ms`;
const cols = results.map(({ scale }) => `${n(scale.kustomizations)} × ${scale.objectsEach}`);
const row = (label: string, f: (x: Figures) => string): string =>
  `| ${label} | ${results.map((r) => f(r.figures)).join(' | ')} |`;
process.stdout.write(`## Web UI at ${cols.join(' and ')} (Kustomizations × the objects each applied)

What: \`mooring ui -n <ns>\` in its own process (the CLI's bundle) against the bench control plane;
the namespace holds that many Kustomizations, each with a Ready status and its objects in its
inventory, the objects themselves (ConfigMaps), and a GitRepository. Debian's chromium headless
opens it. Statuses are written to the status subresource directly, so no operator's work is in
the figures. Node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)} when the run ended.

| figure | ${cols.join(' | ')} |
|---|${cols.map(() => '---:').join('|')}|
${row('server start to URL printed (lists every kind once, bundles the page)', (f) => ms(f.serverReadyMs))}
${row(`first meaningful paint: navigation to the first rows on screen, median of ${PAINTS}`, (f) => ms(f.paintP50))}
${row('same, p95', (f) => ms(f.paintP95))}
${row('one overview page (100 rows) as JSON', (f) => `${f.pageKiB.toFixed(0)} KiB`)}
${row('a search over every object, answered by the server', (f) => ms(f.searchMs))}
${row('graph of the namespace: navigation to its nodes on screen', (f) => ms(f.graphMs))}
${row("longest task on the page's thread meanwhile (layout runs in a worker)", (f) => ms(f.graphLongestTaskMs))}
${row(`status write on the API server → row shown failed, p50 of ${CHANGES}`, (f) => ms(f.changeP50))}
${row('same, p95', (f) => ms(f.changeP95))}
${row("longest task on the page's thread during those changes", (f) => ms(f.overviewLongestTaskMs))}
${row('server RSS idle after the first list', (f) => `${f.rssIdle.toFixed(0)} MB`)}
${row('server RSS after the run', (f) => `${f.rssAfter.toFixed(0)} MB`)}

What the graph said: ${results.map((r) => `at ${n(r.scale.kustomizations)} × ${r.scale.objectsEach}, "${r.figures.graphNote}"`).join('; ')}.

The change latency includes the watch event, the server's 100 ms batching of server-sent events,
the page's 200 ms debounce and its re-read of one page of rows, and Playwright noticing the row.
A long task is one the browser reports as over 50 ms (0 means none was).

Reproduce: \`npm run bench -- ui.bench\` (\`MOORING_UI_BENCH_SCALES=1000x4\` for the small scale alone).
`);
