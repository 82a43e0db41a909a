import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const configMap = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

test('resume --all waits for a Kustomization whose dependency it resumes too, instead of reporting it failed', async (t) => {
  const ns = await testNamespace(t, 'cli-resume-deps');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('platform');
  await repo.commit({ 'infra/cm.yaml': configMap('infra'), 'apps/cm.yaml': configMap('apps') });
  await startGitOpsOperators(t, ns);
  const created = await mooring(
    ['create', 'source', 'git', 'platform', '--url', repo.url, '--interval', '1h', '-n', ns],
    {
      env,
    },
  );
  assert.equal(created.code, 0, created.stderr);
  const source = await mooring(['reconcile', 'source', 'git', 'platform', '-n', ns, '--timeout', '2m'], {
    env,
  });
  assert.equal(source.code, 0, source.stderr);
  // Both suspended from the start. The dependent sorts first, so resuming and waiting one at a
  // time would see it refused with DependencyNotReady while its dependency is still suspended.
  for (const [name, dependsOn] of [
    ['a-apps', [{ name: 'b-infra' }]],
    ['b-infra', undefined],
  ] as const) {
    await client.create({
      apiVersion: 'kustomize.mooring.dev/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: ns },
      spec: {
        sourceRef: { kind: 'GitRepository', name: 'platform' },
        path: name === 'a-apps' ? './apps' : './infra',
        interval: '1h',
        prune: true,
        suspend: true,
        dependsOn,
      },
    });
  }
  const resumed = await mooring(['resume', 'ks', '--all', '-n', ns, '--timeout', '3m'], { env });
  assert.equal(resumed.code, 0, `${resumed.stdout}${resumed.stderr}`);
  assert.match(resumed.stdout, new RegExp(`^✔ Kustomization ${ns}/a-apps resumed$`, 'm'));
  assert.match(resumed.stdout, new RegExp(`^✔ Kustomization ${ns}/a-apps: Applied revision`, 'm'));
  assert.match(resumed.stdout, new RegExp(`^✔ Kustomization ${ns}/b-infra: Applied revision`, 'm'));
  assert.doesNotMatch(resumed.stdout, /✗/);
});
