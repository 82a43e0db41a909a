import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { GitServer, privateControlPlane } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const NS = 'mooring-system';

function image(dep: KubeObject): string {
  return (dep.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
    .containers[0]!.image;
}

// A plane of its own, with workloads: uninstall removes CRDs, and the operator Deployments must
// really roll out (kube-controller-manager, kube-scheduler, kwok). kwok runs no containers, so the
// operator pods turn Ready without running anything; the operators themselves run here, in the
// test process, watching mooring-system as those pods would.
test('install --wait, then bootstrap git: waits for the rollout, and Mooring then manages itself from Git; a rerun upgrades in place; uninstall leaves workloads', async (t) => {
  const plane = await privateControlPlane(t, { workloads: true });
  const { client } = plane;
  const env = { KUBECONFIG: plane.kubeconfig, MOORING_GIT_PASSWORD: 'pa55-word' };

  const git = await GitServer.start({ auth: { username: 'ops', password: 'pa55-word' } });
  t.after(() => git.close());
  const repo = await git.createRepo('fleet');
  await repo.commit({ 'README.md': 'fleet\n' });

  const operators = await startGitOpsOperators(t, NS, { kubeconfig: plane.kubeconfig });

  // Installed first by hand, as many clusters are before they are bootstrapped.
  const installed = await mooring(['install', '--wait', '--timeout', '3m'], { env });
  assert.equal(installed.code, 0, installed.stderr);
  assert.match(installed.stderr, /^✔ Deployment mooring-system\/image-automation is ready$/m);
  assert.equal(installed.stdout, '✔ Mooring installed in mooring-system and running\n');

  const args = ['bootstrap', 'git', '--url', repo.url, '--path', 'clusters/dev', '--username', 'ops'];
  const first = await mooring([...args, '--timeout', '3m'], { env });
  assert.equal(first.code, 0, first.stderr);
  const pushed = /^✔ pushed commit ([0-9a-f]{40})$/m.exec(first.stdout)?.[1];
  assert.ok(pushed, first.stdout);
  for (const name of ['source', 'kustomize', 'notification', 'image-automation'])
    assert.match(first.stderr, new RegExp(`^✔ Deployment mooring-system/${name} is ready$`, 'm'));
  assert.match(
    first.stdout,
    new RegExp(
      `^✔ Mooring manages itself from ${repo.url.replace(/\./g, '\\.')} at main@sha1:${pushed}$`,
      'm',
    ),
  );
  assert.ok(!`${first.stdout}${first.stderr}`.includes('pa55-word'));

  // Mooring's own Deployment is in its Kustomization's inventory, applied by the operator.
  const ks = await client.get({
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    namespace: NS,
    name: NS,
  });
  const entries = ((ks.status as { inventory?: { entries: { id: string }[] } }).inventory?.entries ?? []).map(
    (e) => e.id,
  );
  assert.ok(entries.includes('mooring-system_source_apps_Deployment'), entries.join('\n'));
  assert.ok(
    entries.includes('_kustomizations.kustomize.mooring.dev_apiextensions.k8s.io_CustomResourceDefinition'),
  );
  const source = await client.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: NS,
    name: 'source',
  });
  assert.ok(
    (source.metadata.managedFields as { manager?: string }[] | undefined)?.some(
      (f) => f.manager === 'mooring',
    ),
  );

  // The Deployments are available, but kwok's fake nodes run no containers: check does not pass them.
  const check = await mooring(['check'], { env });
  assert.equal(check.code, 1, check.stdout + check.stderr);
  assert.match(check.stdout, /^✔ CRD kustomizations\.kustomize\.mooring\.dev established$/m);
  assert.match(check.stdout, /^⚠ source: its pods run on kwok's fake nodes, which run no containers$/m);
  assert.doesNotMatch(check.stdout, /all checks passed/);

  // What the team adds beside mooring-system/ in the cluster's folder is applied too.
  await repo.pull();
  await repo.commit({
    'clusters/dev/team/model.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: model\n  namespace: default\ndata:\n  version: v7\n',
  });
  const synced = await mooring(['reconcile', 'kustomization', NS, '-n', NS, '--with-source'], { env });
  assert.equal(synced.code, 0, synced.stderr);
  const model = await client.get({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'default',
    name: 'model',
  });
  assert.deepEqual(model.data, { version: 'v7' });

  // Bootstrap again with a new version: the upgrade goes through Git, rolls out, and keeps the team's files.
  const upgrade = await mooring([...args, '--version', 'v0.2.0', '--timeout', '3m'], { env });
  assert.equal(upgrade.code, 0, upgrade.stderr);
  const upgradeCommit = /^✔ pushed commit ([0-9a-f]{40})$/m.exec(upgrade.stdout)?.[1];
  assert.ok(upgradeCommit, upgrade.stdout);
  assert.match(upgrade.stdout, new RegExp(`at main@sha1:${upgradeCommit}$`, 'm'));
  for (const name of ['source', 'kustomize', 'notification', 'image-automation']) {
    const dep = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name });
    assert.equal(image(dep), 'ghcr.io/mooring-dev/mooring:v0.2.0');
    const status = dep.status as { updatedReplicas?: number; availableReplicas?: number; replicas?: number };
    assert.equal(status.updatedReplicas, status.replicas, `${name} rolled out`);
  }
  assert.ok(
    await client.getOrUndefined({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'model' }),
  );
  const version = await mooring(['version'], { env });
  assert.equal(version.code, 0, version.stderr);
  assert.match(
    version.stdout,
    /^mooring: v\S+\nsource: v0\.2\.0\nkustomize: v0\.2\.0\nnotification: v0\.2\.0\nimage-automation: v0\.2\.0\n$/,
  );

  // As in a real cluster, uninstall stops the operators first; what they applied stays.
  await operators.stop();
  const gone = await mooring(['uninstall', '--yes'], { env });
  assert.equal(gone.code, 0, gone.stderr);
  assert.match(gone.stdout, /^deleted Kustomization mooring-system\/mooring-system$/m);
  assert.ok(
    await client.getOrUndefined({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'model' }),
  );
});
