// The README's main command, run as a new user would (`npm run demo -- --once`), on a control
// plane of its own: every step the demo claims must show in its output.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { down, locationAt, repoRoot } from './lib/control-plane.ts';

const dir = join(repoRoot, '.mooring/test-demo-plane');
after(() => down(locationAt(dir)));

test('npm run demo -- --once walks through sync, promotion, drift, a refused commit and the fix', {
  timeout: 600_000,
}, async () => {
  const child = spawn('bash', ['hack/demo', '--once'], {
    cwd: repoRoot,
    env: { ...process.env, MOORING_DEMO_DIR: dir, KUBECONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, out);
  const expectations: [string, RegExp][] = [
    ['the stack is applied with pods Ready', /infra, then apps, applied in \d+ ms, pods Ready/],
    [
      'the live table shows both Kustomizations Ready',
      /Kustomization\s+apps\s+main@sha1:[0-9a-f]{7}\s+True\s+Applied revision/,
    ],
    ['the webhook is accepted', /webhook answered 200/],
    ['the promotion is applied', /ghcr\.io\/acme\/sentiment-server:1\.1\.0\s+ready 2\/2/],
    ['the alert reaches the team webhook', /the team's webhook got: Kustomization\/apps: Applied revision/],
    ['drift is corrected', /MAX_BATCH is 32 again after \d+ ms/],
    ['the broken commit is refused with its reason', /apps: Ready False, BuildFailed: .*autoscaler\.yaml/],
    ['the fix heals it and prunes the canary', /healed in \d+ ms/],
    ['the final state runs model 1.2.0', /sentiment-server:1\.2\.0\s+ready 2\/2/],
  ];
  for (const [what, pattern] of expectations) assert.match(out, pattern, what);
  assert.doesNotMatch(out, /canary-traffic[^\n]*\n[^\n]*\n*Summary/, 'the canary is gone at the end');
});
