// The web UI at 1,000 Kustomizations × 4 applied objects (issue #18's "Speed"): `mooring ui` runs
// as users start it (its own process, the CLI's bundle) against the bench control plane; Debian's
// chromium opens it. Statuses are written straight to the status subresource (no operators), so
// the figures are the UI's own: time to the first rows on screen, time from a status write on
// the API server to the page showing it, and the server's memory.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { KubeClient } from '@mooring/runtime';
import { chromium } from 'playwright-core';
import { locationAt, repoRoot, up } from '../../hack/lib/control-plane.ts';

const KUSTOMIZATIONS = 1000;
const OBJECTS_EACH = 4;
const PAINTS = 7;
const CHANGES = 40;
const CHROMIUM = process.env.MOORING_CHROMIUM ?? '/usr/bin/chromium';
const MANAGER = 'mooring-ui-bench';

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
const plane = await up(locationAt(join(repoRoot, '.mooring/bench-control-plane')));
const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 400, burst: 800 });
const ns = `ui-bench-${process.pid}`;
await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

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
async function writeStatus(i: number, status: string, reason: string, message: string): Promise<void> {
  await client.applyStatus(
    {
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name: name(i), namespace: ns },
      status: {
        observedGeneration: 1,
        lastAppliedRevision: 'main@sha1:0123456789abcdef0123456789abcdef01234567',
        conditions: ready(status, reason, message),
        inventory: {
          entries: Array.from({ length: OBJECTS_EACH }, (_, k) => ({
            id: `${ns}_${name(i)}-cm-${k}__ConfigMap`,
            v: 'v1',
          })),
        },
      },
    },
    { fieldManager: MANAGER, force: true },
  );
}

// In parallel batches: the set-up is not what is measured.
async function inBatches(n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < n; start += 50)
    await Promise.all(Array.from({ length: Math.min(50, n - start) }, (_, k) => fn(start + k)));
}

let server: ReturnType<typeof spawn> | undefined;
const profile = mkdtempSync(join(tmpdir(), 'mooring-ui-bench-'));
try {
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'platform', namespace: ns },
    spec: { url: 'https://example.invalid/platform.git', interval: '1h', ref: { branch: 'main' } },
  });
  await inBatches(KUSTOMIZATIONS, (i) =>
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
  await inBatches(KUSTOMIZATIONS, (i) =>
    writeStatus(i, 'True', 'ReconciliationSucceeded', 'Applied revision: main@sha1:0123456'),
  );

  const started = Date.now();
  server = spawn(
    process.execPath,
    [join(repoRoot, 'cli/bin/mooring.js'), 'ui', '--port', '0', '--no-open', '-n', ns],
    {
      env: { ...process.env, KUBECONFIG: plane.kubeconfig },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
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
  const rssMb = (): number => {
    const status = readFileSync(`/proc/${server!.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  const rssIdle = rssMb();

  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
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

  // Change to page: a status write on the API server until its row shows failed (failing first).
  const latencies: number[] = [];
  for (let c = 0; c < CHANGES; c++) {
    const i = (c * 37) % KUSTOMIZATIONS;
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
    process.stderr.write(`ui bench: change ${c} shown after ${(performance.now() - t0).toFixed(0)} ms\n`);
  }
  const rssAfter = rssMb();
  await context.close();

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const pct = (xs: number[], p: number) =>
    sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
  const load = loadavg()[0]!.toFixed(2);
  process.stdout.write(`## Web UI at ${KUSTOMIZATIONS.toLocaleString('en')} Kustomizations × ${OBJECTS_EACH} objects

What: \`mooring ui -n <ns>\` in its own process (the CLI's bundle) against the bench control plane
holding ${KUSTOMIZATIONS} Kustomizations, each with a Ready status and ${OBJECTS_EACH} inventory entries, and a
GitRepository; Debian's chromium headless opens it. Statuses are written to the status
subresource directly, so no operator's work is in the figures. Node ${process.version},
${cpus().length} CPUs, load average ${load} when the run ended.

| figure | value |
|---|---:|
| server start to URL printed (lists every kind once, bundles the page) | ${serverReadyMs} ms |
| first meaningful paint: navigation to the first rows on screen, median of ${PAINTS} (p95) | ${pct(paints, 50).toFixed(0)} ms (${pct(paints, 95).toFixed(0)} ms) |
| one overview page (100 rows) as JSON | ${(payload / 1024).toFixed(0)} KiB |
| status write on the API server → row shown failed, p50 of ${CHANGES} | ${pct(latencies, 50).toFixed(0)} ms |
| same, p95 | ${pct(latencies, 95).toFixed(0)} ms |
| server RSS idle after the first list | ${rssIdle.toFixed(0)} MB |
| server RSS after the run | ${rssAfter.toFixed(0)} MB |

The change latency includes the watch event, the server's 100 ms batching of server-sent events,
the page's 200 ms debounce and its re-read of one page of rows, and Playwright noticing the row.

Reproduce: \`npm run bench -- ui.bench\`.
`);
} finally {
  server?.kill('SIGINT');
  rmSync(profile, { recursive: true, force: true });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
  client.close();
}
