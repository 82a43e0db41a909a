// The README's main command, run as a new user would, on a control plane of its own: every step
// the demo claims must show in its output (`npm run demo -- --once`), and while it keeps running the
// commands it prints must work as printed, with the status table following them as plain lines
// (stdout is a pipe here, not a terminal).
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { KubeClient } from '@mooring/runtime';
import { eventually } from '@mooring/test/harness';
import { LOCAL_OPERATORS_LEASE } from './demo-marker.ts';
import { down, locationAt, repoRoot } from './lib/control-plane.ts';

const dir = join(repoRoot, '.mooring/test-demo-plane');
after(() => down(locationAt(dir)));

// Generous bounds that only turn a hang into a readable failure; nothing here is timed.
const PATIENCE = 300_000;
const ESC = '\x1b';

/** The demo as the README runs it, its stdout and stderr as one text. */
function startDemo(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn('bash', ['hack/demo', ...args], {
    cwd: repoRoot,
    env: { ...process.env, MOORING_DEMO_DIR: dir, KUBECONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  return { child, output: () => out };
}

test('npm run demo -- --once walks through sync, promotion, drift, a refused commit and the fix', {
  timeout: 600_000,
}, async () => {
  const { child, output } = startDemo(['--once']);
  const [code] = await once(child, 'exit');
  const out = output();
  assert.equal(code, 0, out);
  const expectations: [string, RegExp][] = [
    [
      'the web UI is served on loopback with its token',
      /web UI: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}/,
    ],
    ['the stack is applied with pods Ready', /infra, then apps, applied in \d+ ms, pods Ready/],
    [
      'the table shows both Kustomizations Ready',
      /mooring-demo\s+kustomization\/apps\s+main@sha1:[0-9a-f]{7}\s+False\s+True\s+Applied revision/,
    ],
    [
      'the webhook is accepted and is what made the GitRepository fetch',
      /webhook answered 200: the Receiver had GitRepository\/platform fetch at once/,
    ],
    ['the promotion is applied', /ghcr\.io\/acme\/sentiment-server:1\.1\.0\s+ready 2\/2/],
    ['the alert reaches the team webhook', /the team's webhook got: Kustomization\/apps: Applied revision/],
    ['drift is corrected', /MAX_BATCH is 32 again after \d+ ms/],
    ['the broken commit is refused with its reason', /apps: Ready False, BuildFailed: .*autoscaler\.yaml/],
    ['the fix heals it and prunes the canary', /healed in \d+ ms/],
    ['the final state runs model 1.2.0', /sentiment-server:1\.2\.0\s+ready 2\/2/],
    ['the agent chart is released', /prometheus-node-exporter 4\.56\.1 released as revision 1 in \d+ ms/],
    [
      'a value changed in Git upgrades it',
      /upgraded to revision 2 in \d+ ms: quay\.io\/prometheus\/node-exporter:v1\.12\.1/,
    ],
    [
      'a hand edit of its DaemonSet is reverted',
      /node-exporter:v1\.12\.1 again after \d+ ms, and still revision 2/,
    ],
    ['the model-server chart is released', /model-server 0\.1\.0 released as translate-api revision 1/],
    [
      'a chart value changed in Git promotes the model',
      /translate-api upgraded to revision 2 in \d+ ms: ghcr\.io\/acme\/translate-server:2\.1\.0\s+ready 2\/2/,
    ],
    [
      'the fleet agent runs on the demo cluster with its region',
      /cluster demo\s+DaemonSet fleet-agents\/node-agent\s+cluster=demo region=eu-west/,
    ],
    [
      'and on the second cluster with its own',
      /cluster edge\s+DaemonSet fleet-agents\/node-agent\s+cluster=edge region=us-east/,
    ],
    ['both fleet members are Ready, timed in the summary', /agent on two clusters\s+\d+ ms/],
    [
      'the table at the end shows the fix applied',
      /Status at the end:\n(?:.*\n)*? {3}mooring-demo\s+kustomization\/apps\s+main@sha1:[0-9a-f]{7}\s+False\s+True\s+Applied/,
    ],
  ];
  for (const [what, pattern] of expectations) assert.match(out, pattern, what);
  assert.doesNotMatch(out, /canary-traffic[^\n]*\n[^\n]*\n*Summary/, 'the canary is gone at the end');
  assert.ok(!out.includes(ESC), 'stdout is not a terminal: no escape sequences');
  assert.doesNotMatch(out, /Live status/, '--once exits after the walk-through');
  const client = await KubeClient.fromKubeconfig(join(dir, 'kubeconfig'));
  try {
    assert.equal(
      await client.getOrUndefined(LOCAL_OPERATORS_LEASE),
      undefined,
      'the marker goes with the demo',
    );
    assert.ok(
      !existsSync(join(dir, 'edge-plane')),
      'the second cluster is stopped and removed with the demo',
    );
  } finally {
    client.close();
  }
});

test('while npm run demo keeps running, its printed commands work as printed and the table follows them', {
  timeout: 1_200_000,
}, async () => {
  const { child, output } = startDemo([]);
  const exited = once(child, 'exit');
  try {
    /** Waits until the output after `from` matches; returns the match. */
    const waitFor = async (what: string, pattern: RegExp, from = 0): Promise<RegExpMatchArray> => {
      let code: unknown;
      void exited.then(([c]) => (code = c));
      return eventually(
        what,
        async () => {
          if (code !== undefined) throw new Error(`the demo exited (${code}):\n${output()}`);
          return output().slice(from).match(pattern) ?? undefined;
        },
        PATIENCE,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n--- demo output:\n${output()}`);
      });
    };
    await waitFor('the live table', /Live status, every namespace \(a line per change;.*\n(?: {3}.*\n)+/);
    const out = output();
    const live = out.indexOf('Live status');
    assert.match(
      out.slice(live),
      /mooring-demo\s+kustomization\/apps\s+main@sha1:[0-9a-f]{7}\s+False\s+True/,
    );
    // The commands the demo printed, run from the repository as a new user would.
    const section = (title: string) => {
      const start = out.indexOf(title);
      assert.ok(start >= 0, title);
      const body = out.slice(start).split('\n\n')[0]!.split('\n').slice(1);
      return body.map((l) => l.replace(/^ {2}/, ''));
    };
    const explore = section('Explore (in another terminal, in this directory):');
    const change = section('Change it while this runs');
    const kubeconfig = resolve(repoRoot, /^export KUBECONFIG=(\S+)$/m.exec(explore.join('\n'))![1]!);
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfig,
      GIT_AUTHOR_NAME: 'Demo User',
      GIT_AUTHOR_EMAIL: 'demo@mooring.invalid',
      GIT_COMMITTER_NAME: 'Demo User',
      GIT_COMMITTER_EMAIL: 'demo@mooring.invalid',
    };
    const run = async (line: string): Promise<{ code: number; out: string }> => {
      const command = line.replace(/\s+#.*$/, '');
      try {
        const r = await promisify(execFile)('bash', ['-c', command], { cwd: repoRoot, env });
        return { code: 0, out: r.stdout + r.stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
      }
    };
    const printed = (lines: string[], start: string) => {
      const line = lines.find((l) => l.startsWith(start));
      assert.ok(line, `the demo prints a command starting '${start}':\n${lines.join('\n')}`);
      return line;
    };
    for (const line of explore.filter((l) => !/^(export|hack\/control-plane down)/.test(l))) {
      const r = await run(line);
      assert.equal(r.code, 0, `${line}\n${r.out}`);
    }
    const webUi = /^Web UI, while this runs: (\S+)$/m.exec(out)?.[1];
    assert.ok(webUi, 'the demo prints its web UI URL');
    assert.equal((await fetch(webUi)).status, 200, 'the web UI serves its page');
    const client = await KubeClient.fromKubeconfig(kubeconfig);
    try {
      const lease = await client.get(LOCAL_OPERATORS_LEASE);
      assert.equal(lease.metadata.annotations?.['mooring.dev/operators'], 'source,kustomize,notification');
      assert.equal(lease.metadata.annotations?.['mooring.dev/watch-namespace'], '');

      // A plain git push, no webhook: the GitRepository's interval fetches it.
      const clone = resolve(repoRoot, /^# (\S+) is a clone/m.exec(change.join('\n'))![1]!);
      const overlay = join(clone, 'apps/staging/kustomization.yaml');
      writeFileSync(overlay, readFileSync(overlay, 'utf8').replaceAll('1.2.0', '1.3.0'));
      const diff = await run(printed(change, 'npx mooring diff kustomization apps'));
      assert.equal(diff.code, 1, `diff exits 1 on a change:\n${diff.out}`);
      assert.match(diff.out, /1\.3\.0/);
      let from = output().length;
      const pushed = await run(printed(change, 'git -C'));
      assert.equal(pushed.code, 0, pushed.out);
      const sha = (await promisify(execFile)('git', ['-C', clone, 'rev-parse', 'HEAD'])).stdout.trim();
      await waitFor(
        'the push applied, as a line of the table',
        new RegExp(`mooring-demo\\s+kustomization/apps\\s+main@sha1:${sha.slice(0, 7)}\\s+False\\s+True`),
        from,
      );

      // Suspend and resume show as they happen.
      from = output().length;
      const suspend = printed(change, 'npx mooring suspend kustomization apps');
      assert.equal((await run(suspend)).code, 0);
      await waitFor('the suspension', /mooring-demo\s+kustomization\/apps\s+\S+\s+True\s+True/, from);
      from = output().length;
      const resumed = await run(suspend.replace('suspend', 'resume'));
      assert.equal(resumed.code, 0, resumed.out);
      await waitFor('the resumption', /mooring-demo\s+kustomization\/apps\s+\S+\s+False\s+True/, from);

      // The README's `mooring create ... -n default`: reconciled, since the operators watch every namespace.
      from = output().length;
      for (const start of ['npx mooring create source git', 'npx mooring create kustomization hello']) {
        const r = await run(printed(change, start));
        assert.equal(r.code, 0, r.out);
      }
      await waitFor(
        'the Kustomization in default applied',
        /default\s+kustomization\/hello\s+main@sha1:[0-9a-f]{7}\s+False\s+True\s+Applied revision/,
        from,
      );
      const hello = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'hello' };
      assert.ok(await client.getOrUndefined(hello), 'the ConfigMap hello is applied');
      from = output().length;
      const deleted = await run(printed(change, 'npx mooring delete kustomization hello'));
      assert.equal(deleted.code, 0, deleted.out);
      await waitFor('the deletion', /default\s+kustomization\/hello\s.*\(deleted\)/, from);
      assert.equal(await client.getOrUndefined(hello), undefined, 'the ConfigMap it applied is pruned');
    } finally {
      client.close();
    }

    child.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, output());
    assert.match(output(), /Stopping Mooring and the Git server; the control plane keeps running/);
    assert.ok(!output().includes(ESC), 'stdout is not a terminal: no escape sequences');
    const after = await KubeClient.fromKubeconfig(kubeconfig);
    try {
      assert.equal(
        await after.getOrUndefined(LOCAL_OPERATORS_LEASE),
        undefined,
        'the marker goes with the demo',
      );
    } finally {
      after.close();
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
});
