import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { KubeObject } from '@mooring/runtime';
import { GitServer } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const show = async (bare: string, file: string): Promise<string> =>
  (await promisify(execFile)('git', ['--git-dir', bare, 'show', `main:${file}`], { maxBuffer: 8 << 20 }))
    .stdout;

test('bootstrap git pushes the install and a self-pointing sync, with credentials kept out of output; a rerun pushes nothing', async (t) => {
  const git = await GitServer.start({ auth: { username: 'ops', password: 'pa55-word' } });
  t.after(() => git.close());
  const repo = await git.createRepo('fleet');
  await repo.commit({ 'README.md': 'fleet\n' });
  const args = [
    'bootstrap',
    'git',
    '--url',
    repo.url,
    '--path',
    'clusters/dev',
    '--username',
    'ops',
    '--registry',
    'mirror.example/platform',
    '--image-pull-secret',
    'regcred',
    '--skip-install',
  ];
  const first = await mooring(args, { env: { MOORING_GIT_PASSWORD: 'pa55-word' } });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^✔ pushed commit [0-9a-f]{40}\n$/);
  assert.ok(!`${first.stdout}${first.stderr}`.includes('pa55-word'));

  const sync = parseAllDocuments(await show(repo.bareDir, 'clusters/dev/mooring-system/sync.yaml')).map(
    (d) => d.toJS() as KubeObject,
  );
  assert.deepEqual(
    sync.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
    ['GitRepository/mooring-system/mooring-system', 'Kustomization/mooring-system/mooring-system'],
  );
  assert.equal((sync[0]!.spec as { url: string }).url, repo.url);
  assert.deepEqual((sync[0]!.spec as { secretRef: unknown }).secretRef, { name: 'mooring-system' });
  assert.equal((sync[1]!.spec as { path: string }).path, './clusters/dev');
  const components = await show(repo.bareDir, 'clusters/dev/mooring-system/components.yaml');
  assert.ok(components.includes('kind: CustomResourceDefinition'));
  // The operators pull from the mirror the flags name, with the pull secret.
  assert.match(components, /^ {8}image: mirror\.example\/platform\/mooring:v\d+\.\d+\.\d+$/m);
  assert.match(components, /^ {6}imagePullSecrets:\n {6}- name: regcred$/m);
  assert.ok(!components.includes('pa55-word'));
  // The user's own files are kept.
  assert.equal(await show(repo.bareDir, 'README.md'), 'fleet\n');

  const again = await mooring(args, { env: { MOORING_GIT_PASSWORD: 'pa55-word' } });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, '✔ the repository is up to date\n');

  const denied = await mooring([...args.slice(0, -1), '--skip-install'], {
    env: { MOORING_GIT_PASSWORD: 'wrong' },
  });
  assert.equal(denied.code, 1);
  assert.match(
    denied.stderr,
    /^✗ git ls-remote failed for http:\/\/127\.0\.0\.1:\d+\/fleet\.git \(.*\): check the URL, the branch and the credentials/m,
  );
  assert.ok(!denied.stderr.includes('wrong'));
});
