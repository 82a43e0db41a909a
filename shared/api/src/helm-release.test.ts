import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import {
  type HelmRelease,
  releaseNameOf,
  releaseStorageNamespace,
  releaseTargetNamespace,
} from './helm-release.ts';

const hr = (name: string, spec: Partial<HelmRelease['spec']> = {}): HelmRelease => ({
  apiVersion: 'helm.mooring.dev/v2',
  kind: 'HelmRelease',
  metadata: { name, namespace: 'flux-system' },
  spec: { interval: '10m', ...spec },
});

test("release name and namespaces follow Flux's rules, so a release Flux made is found under its name", () => {
  assert.equal(releaseNameOf(hr('podinfo')), 'podinfo');
  assert.equal(releaseNameOf(hr('podinfo', { targetNamespace: 'apps' })), 'apps-podinfo');
  assert.equal(releaseNameOf(hr('podinfo', { targetNamespace: 'apps', releaseName: 'web' })), 'web');
  const long = `${'n'.repeat(30)}-${'r'.repeat(30)}`;
  const shortened = releaseNameOf(hr('r'.repeat(30), { targetNamespace: 'n'.repeat(30) }));
  // helm-controller's ShortenName: 40 characters, a dash, 12 hex digits of the name's sha256.
  assert.equal(
    shortened,
    `${long.slice(0, 40)}-${createHash('sha256').update(long).digest('hex').slice(0, 12)}`,
  );
  assert.equal(shortened.length, 53);
  assert.equal(releaseTargetNamespace(hr('a')), 'flux-system');
  assert.equal(releaseStorageNamespace(hr('a', { targetNamespace: 'apps' })), 'apps');
  assert.equal(
    releaseStorageNamespace(hr('a', { targetNamespace: 'apps', storageNamespace: 'records' })),
    'records',
  );
});
