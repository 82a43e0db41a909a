import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

// A postBuild variable reference, built without a `${` in a JavaScript string.
const VAR = `$${'{'}version}`;

// With the real operators running: the CLI's local render must agree with what the operator applied.
test('reconcile --with-source, then diff shows no drift against what the operator applied, and tree lists it', async (t) => {
  const ns = await testNamespace(t, 'cli-agree');
  const { kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('stack');
  const files = {
    'apps/kustomization.yaml': 'resources:\n  - cm.yaml\n',
    'apps/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: model\ndata:\n  version: ${VAR}\n`,
  };
  const commit = await repo.commit(files);
  await startGitOpsOperators(t, ns);
  const local = await mkdtemp(join(tmpdir(), 'mooring-cli-local-'));
  t.after(() => rm(local, { recursive: true, force: true }));
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(join(local, 'apps'));
  for (const [f, text] of Object.entries(files)) await writeFile(join(local, f), text);

  for (const args of [
    ['create', 'source', 'git', 'stack', '--url', repo.url, '--interval', '1h'],
    [
      'create',
      'ks',
      'apps',
      '--source',
      'GitRepository/stack',
      '--path',
      './apps',
      '--prune',
      '--interval',
      '1h',
      '--name-prefix',
      'v-',
      '--substitute',
      'version=1.2.0',
    ],
  ]) {
    const r = await mooring([...args, '-n', ns], { env });
    assert.equal(r.code, 0, r.stderr);
  }
  const rec = await mooring(['reconcile', 'ks', 'apps', '--with-source', '-n', ns, '--timeout', '90s'], {
    env,
  });
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(
    rec.stdout,
    new RegExp(`^✔ GitRepository ${ns}/stack reconciled at revision main@sha1:${commit}`, 'm'),
  );
  assert.match(
    rec.stdout,
    new RegExp(`^✔ Kustomization ${ns}/apps reconciled at revision main@sha1:${commit}`, 'm'),
  );

  const [diff, tree] = await Promise.all([
    mooring(['diff', 'ks', 'apps', '--path', join(local, 'apps'), '-n', ns], { env }),
    mooring(['tree', 'ks', 'apps', '-n', ns], { env }),
  ]);
  assert.equal(diff.code, 0, `the CLI and the operator disagree:\n${diff.stdout}${diff.stderr}`);
  assert.equal(tree.stdout, `Kustomization/${ns}/apps\n└── ConfigMap/${ns}/v-model\n`);

  // A local edit is what diff previews before a merge.
  await writeFile(join(local, 'apps/cm.yaml'), files['apps/cm.yaml'].replace(VAR, '2.0.0'));
  const preview = await mooring(['diff', 'ks', 'apps', '--path', join(local, 'apps'), '-n', ns], { env });
  assert.equal(preview.code, 1, preview.stderr);
  assert.match(preview.stdout, /^- {2}version: 1\.2\.0$/m);
  assert.match(preview.stdout, /^\+ {2}version: 2\.0\.0$/m);

  // An object dropped from Git is pruned: diff shows it as deleted.
  await writeFile(join(local, 'apps/kustomization.yaml'), 'resources: []\n');
  const pruned = await mooring(['diff', 'ks', 'apps', '--path', join(local, 'apps'), '-n', ns], { env });
  assert.equal(pruned.code, 1, pruned.stderr);
  assert.match(pruned.stdout, new RegExp(`^► ConfigMap/${ns}/v-model deleted$`, 'm'));

  // suspend then resume: resume waits for the reconcile it asks for.
  assert.equal((await mooring(['suspend', 'ks', 'apps', '-n', ns], { env })).code, 0);
  const resumed = await mooring(['resume', 'ks', 'apps', '-n', ns, '--timeout', '90s'], { env });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, new RegExp(`^✔ Kustomization ${ns}/apps: `, 'm'));
});
