// The whole loop: a new tag pushed to the registry is scanned, chosen, committed to Git by the
// image-automation operator, packed by the source operator and applied by the kustomize operator,
// all three in this process against the real API server, registry and Git server on loopback.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  GitServer,
  startInProcessOperators,
  TestRegistry,
  testCluster,
  uniqueName,
} from '@mooring/test/harness';
import { imageAutomationOperator } from '../src/image-automation-operator.ts';
import { createGitRepository, createImageObject, pushTags, requestReconcile } from './image-fixture.ts';

interface Deployment extends KubeObject {
  spec: { template: { spec: { containers: { name: string; image: string }[] } } };
}

test('a new tag in the registry ends as a commit in Git and as the image of the applied Deployment', async (t) => {
  const { client } = await testCluster();
  const ns = uniqueName('image-e2e');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const [registry, server, storage] = await Promise.all([
    TestRegistry.start(),
    GitServer.start(),
    mkdtemp(join(tmpdir(), 'mooring-e2e-storage-')),
  ]);
  const operators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator(), imageAutomationOperator()],
    ns,
    ['--storage-path', storage, '--storage-addr', '127.0.0.1:0', '--requeue-dependency', '2s'],
  );
  t.after(async () => {
    await operators.stop();
    await Promise.all([registry.close(), server.close(), rm(storage, { recursive: true, force: true })]);
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
  });

  const image = `${registry.host}/apps/web`;
  await pushTags(registry.host, 'apps/web', ['1.0.0']);
  const repo = await server.createRepo('fleet');
  await repo.commit({
    'deploy/web.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 0
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ${image}:0.9.0 # {"$imagepolicy": "${ns}:web"}
`,
  });
  // The source polls often here; in a cluster a push webhook through a Receiver does this.
  await createGitRepository(ns, 'fleet', { url: repo.url, interval: '1s', ref: { branch: 'main' } });
  await client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'fleet', namespace: ns },
    spec: {
      interval: '10m',
      prune: true,
      path: './deploy',
      sourceRef: { kind: 'GitRepository', name: 'fleet' },
    },
  } as KubeObject);
  await createImageObject('ImageRepository', ns, 'web', { image, interval: '10m', insecure: true });
  await createImageObject('ImagePolicy', ns, 'web', {
    imageRepositoryRef: { name: 'web' },
    policy: { semver: { range: '^1' } },
  });
  await createImageObject('ImageUpdateAutomation', ns, 'fleet', {
    sourceRef: { kind: 'GitRepository', name: 'fleet' },
    interval: '10m',
    git: { commit: { author: { email: 'bot@mooring.invalid' } } },
  });

  const deployedImage = async () => {
    const d = await client.getOrUndefined<Deployment>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      name: 'web',
    });
    return d?.spec.template.spec.containers[0]?.image;
  };
  await eventually(
    'the Deployment runs 1.0.0',
    async () => (await deployedImage()) === `${image}:1.0.0`,
    30_000,
  );

  await pushTags(registry.host, 'apps/web', ['1.1.0', '2.0.0']);
  await requestReconcile('ImageRepository', ns, 'web'); // the scan interval, shortened
  await eventually(
    'the Deployment runs 1.1.0',
    async () => (await deployedImage()) === `${image}:1.1.0`,
    30_000,
  );
  // 0.9.0 → 1.0.0 → 1.1.0: two automation commits on top of the first one; 2.0.0 is out of range.
  const subjects = execFileSync('git', ['log', '--format=%s', 'main'], {
    cwd: repo.bareDir,
    encoding: 'utf8',
  })
    .trim()
    .split('\n');
  assert.deepEqual(subjects, [
    'Update from image update automation',
    'Update from image update automation',
    'test commit',
  ]);
});
