import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { kustomizationInputs, specFolder, touches } from './kustomization-inputs.ts';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'mooring-inputs-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test('spec.path is read as the operator reads it', () => {
  assert.equal(specFolder('./apps/staging/'), 'apps/staging');
  assert.equal(specFolder('apps'), 'apps');
  assert.equal(specFolder('./'), '');
  assert.equal(specFolder(undefined), '');
});

test('inputs follow bases, components, patches and generator files, but not remote URLs or the outside', (t) => {
  const root = tree({
    'apps/staging/kustomization.yaml': `resources: [../../base/app, outside, ../../../etc, https://github.com/x/y//z?ref=v1]
components: [../../components/tls]
patches: [{path: ../../patches/replicas.yaml}]
configMapGenerator: [{name: c, files: [conf=../../config/app.conf]}]
`,
    'base/app/kustomization.yaml': 'resources: [deployment.yaml]\n',
    'base/app/deployment.yaml': 'kind: Deployment\n',
    'components/tls/kustomization.yaml': 'kind: Component\n',
    'patches/replicas.yaml': 'kind: Deployment\n',
    'config/app.conf': 'x=1\n',
    'unrelated/a.yaml': 'kind: ConfigMap\n',
  });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  symlinkSync('/etc', join(root, 'apps/staging/outside'));
  const inputs = kustomizationInputs(root, 'apps/staging');
  assert.deepEqual(inputs, [
    'apps/staging',
    'base/app',
    'base/app/deployment.yaml',
    'components/tls',
    'config/app.conf',
    'patches/replicas.yaml',
  ]);
  assert.ok(touches(inputs, ['base/app/deployment.yaml']));
  assert.ok(touches(inputs, ['apps/staging/new.yaml']));
  assert.ok(!touches(inputs, ['unrelated/a.yaml', 'apps/staging-other/x.yaml']));
});

test('a kustomization file that cannot be parsed makes every change an input', (t) => {
  const root = tree({ 'app/kustomization.yaml': 'resources: [a.yaml\n' });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.deepEqual(kustomizationInputs(root, 'app'), ['']);
  assert.ok(touches([''], ['anything/at/all.yaml']));
});
