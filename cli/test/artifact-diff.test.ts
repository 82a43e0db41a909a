import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TestRegistry } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

test('diff artifact: exit 0 when the folder packs to the pushed content, 1 with the files that differ, 2 on errors', async (t) => {
  const registry = await TestRegistry.start();
  t.after(() => registry.close());
  const folder = await mkdtemp(join(tmpdir(), 'mooring-diff-artifact-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  await mkdir(join(folder, 'apps'));
  await writeFile(join(folder, 'apps/cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n');
  await writeFile(join(folder, 'kustomization.yaml'), 'resources:\n  - apps/cm.yaml\n');
  const env = { DOCKER_CONFIG: folder, MOORING_OCI_CREDS: undefined };
  const url = `${registry.url('team/app')}:v1`;
  const pushed = await mooring(
    [
      'push',
      'artifact',
      url,
      '--path',
      folder,
      '--source',
      'https://git.example/app',
      '--revision',
      'main@sha1:0123456789abcdef0123456789abcdef01234567',
      '--insecure-registry',
    ],
    { env },
  );
  assert.equal(pushed.code, 0, pushed.stderr);

  // A picture is left out by the default ignore rules, as push leaves it out: still the same.
  await writeFile(join(folder, 'logo.png'), 'not pushed');
  const same = await mooring(['diff', 'artifact', url, '--path', folder, '--insecure-registry'], { env });
  assert.equal(same.code, 0, same.stderr);
  assert.equal(same.stdout, '');
  assert.match(same.stderr, /^✔ no changes: .*team\/app:v1 holds what .* packs to$/m);

  await writeFile(join(folder, 'apps/cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n');
  await writeFile(join(folder, 'new.yaml'), 'kind: Namespace\n');
  await rm(join(folder, 'kustomization.yaml'));
  const changed = await mooring(['diff', 'artifact', url, '--path', folder, '--insecure-registry'], { env });
  assert.equal(changed.code, 1, changed.stderr);
  assert.equal(changed.stdout, '~ apps/cm.yaml\n- kustomization.yaml\n+ new.yaml\n');

  const missing = await mooring(
    ['diff', 'artifact', `${registry.url('team/app')}:v9`, '--path', folder, '--insecure-registry'],
    { env },
  );
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /^✗ .*v9.*: check the address; 'mooring list artifacts .*team\/app' shows the tags$/m,
  );
});
