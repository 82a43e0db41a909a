// Git backends: depth-1 checkout wall time and peak RSS, and the cost of the no-op reconcile
// check (one resolve), for the git CLI and isomorphic-git against `git http-backend` on loopback.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitServer } from '@mooring/test/harness';
import { resolveWithLsRemote } from '../src/cli-backend.ts';
import { resolveInProcess } from '../src/isomorphic-backend.ts';

// Override for a quick smoke run; the published figures use the default.
const FILES = Number(process.env.MOORING_GIT_BENCH_FILES ?? 10_000);
const FILE_BYTES = 5_000;
const RUNS = 3;
const RESOLVE_RUNS = 15;
const here = dirname(fileURLToPath(import.meta.url));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Runs one checkout in a child under /usr/bin/time; resolves to its in-process time and peak RSS in MB. */
function measuredCheckout(backend: string, url: string, dir: string): Promise<{ ms: number; rssMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/time',
      [
        '-f',
        'MAXRSS_KB=%M',
        process.execPath,
        '--import',
        'tsx',
        join(here, 'checkout-child.ts'),
        backend,
        url,
        dir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('close', (code) => {
      const rss = /MAXRSS_KB=(\d+)/.exec(err);
      if (code !== 0 || !rss) {
        reject(new Error(`checkout child (${backend}) failed: ${err.trim()}`));
        return;
      }
      resolve({ ms: (JSON.parse(out.trim()) as { ms: number }).ms, rssMb: Number(rss[1]) / 1024 });
    });
  });
}

const server = await GitServer.start();
const work = mkdtempSync(join(tmpdir(), 'mooring-git-bench-'));
try {
  console.error(`git-backends: generating ${FILES} files of ${FILE_BYTES} bytes`);
  const repo = await server.createRepo('big');
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) {
    // base64 of random bytes: text like real manifests, but it does not compress away.
    files[`dir-${String(i % 100).padStart(2, '0')}/file-${i}.yaml`] = randomBytes(
      (FILE_BYTES * 3) / 4,
    ).toString('base64');
  }
  await repo.commit(files, 'big tree');
  const packBytes = Number(
    (await import('node:child_process'))
      .execFileSync('du', ['-sb', join(repo.bareDir, 'objects')])
      .toString()
      .split('\t')[0],
  );

  const baseline: number[] = [];
  for (let i = 0; i < RUNS; i++) baseline.push((await measuredCheckout('none', '', '')).rssMb);

  const checkout: Record<string, { ms: number[]; rss: number[] }> = {};
  for (let run = 0; run < RUNS; run++) {
    // Interleaved so load changes on the machine hit both backends alike.
    for (const backend of ['cli', 'isomorphic']) {
      const dir = mkdtempSync(join(work, `${backend}-`));
      console.error(`git-backends: checkout ${backend} run ${run + 1}/${RUNS}`);
      const m = await measuredCheckout(backend, repo.url, dir);
      checkout[backend] ??= { ms: [], rss: [] };
      checkout[backend].ms.push(m.ms);
      checkout[backend].rss.push(m.rssMb);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // The two ways to list refs, called directly: GitClient.resolve uses the in-process one on http(s).
  const resolvers = {
    'ls-remote': resolveWithLsRemote,
    listServerRefs: resolveInProcess,
  };
  const resolve: Record<string, { ms: number[]; requests: number }> = {};
  for (const [name, fn] of Object.entries(resolvers)) {
    await fn(repo.url, { branch: 'main' }, { timeoutMs: 30_000 }); // warm-up
    resolve[name] = { ms: [], requests: 0 };
  }
  for (let i = 0; i < RESOLVE_RUNS; i++) {
    // Interleaved, like the checkouts, so both see the same load.
    for (const [name, fn] of Object.entries(resolvers)) {
      const before = server.requests;
      const t = performance.now();
      await fn(repo.url, { branch: 'main' }, { timeoutMs: 30_000 });
      resolve[name]!.ms.push(performance.now() - t);
      resolve[name]!.requests = server.requests - before;
    }
  }

  const cli = checkout.cli!;
  const iso = checkout.isomorphic!;
  const f0 = (n: number) => n.toFixed(0);
  const lines = [
    '## Git backends: checkout and no-op resolve',
    '',
    `Input: one commit of ${FILES.toLocaleString('en')} files × ${FILE_BYTES.toLocaleString('en')} bytes (${((FILES * FILE_BYTES) / 1e6).toFixed(0)} MB work tree, ${(packBytes / 1e6).toFixed(0)} MB of objects on the server), served by the test harness's \`git http-backend\` on loopback. Checkout = \`GitClient.checkout(url, { branch: 'main' })\` into an empty dir (depth 1), each run in a fresh child process; wall time is measured around the call, peak RSS is \`/usr/bin/time\`'s max RSS of the child, which on Linux includes the git processes it spawned. Median of ${RUNS} interleaved runs.`,
    '',
    '| backend | checkout wall time | peak RSS | runs (ms) |',
    '| --- | ---: | ---: | --- |',
    `| git CLI | ${f0(median(cli.ms))} ms | ${f0(median(cli.rss))} MB | ${cli.ms.map(f0).join(', ')} |`,
    `| isomorphic-git | ${f0(median(iso.ms))} ms | ${f0(median(iso.rss))} MB | ${iso.ms.map(f0).join(', ')} |`,
    `| (baseline: Node + tsx + client loaded, no checkout) | – | ${f0(median(baseline))} MB | |`,
    '',
    `isomorphic-git / CLI: ${(median(iso.ms) / median(cli.ms)).toFixed(1)}× the time, ${(median(iso.rss) / median(cli.rss)).toFixed(1)}× the peak RSS.`,
    '',
    `No-op reconcile check: resolving \`{ branch: 'main' }\` on the same repository with each way of listing remote refs, after one warm-up; median of ${RESOLVE_RUNS} interleaved runs. Remote calls = HTTP requests the server saw per resolve. \`GitClient.resolve\` uses the in-process listing on http/https for both backends and \`git ls-remote\` on ssh.`,
    '',
    '| ref listing | how | time | HTTP requests |',
    '| --- | --- | ---: | ---: |',
    `| git CLI | \`git ls-remote\` child process (protocol v2, ref prefix) | ${median(resolve['ls-remote']!.ms).toFixed(1)} ms | ${resolve['ls-remote']!.requests} |`,
    `| isomorphic-git | \`listServerRefs\` in-process (protocol v2, prefix) | ${median(resolve.listServerRefs!.ms).toFixed(1)} ms | ${resolve.listServerRefs!.requests} |`,
    '',
    'Reproduce: `npm run bench -- git-backends`.',
  ];
  console.log(lines.join('\n'));
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
