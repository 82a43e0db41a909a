// buildDecrypting on trees of the real sops fixtures (testdata/sops, made by hack/gen-sops-fixtures.ts):
// only the files a build reads are decrypted, wherever they sit, and the tree is never written.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { build, type ConfinedFs, createConfinedFs, type JsonObject } from '@mooring/kustomize';
import { buildDecrypting } from './decrypting-fs.ts';
import { type DecryptionKeys, decryptFile, FileDecryptionError } from './index.ts';

const DIR = join(import.meta.dirname, '../../testdata/sops');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const keys: DecryptionKeys = { ageIdentities: [read('age.agekey')] };
/** A generated Secret's value as text (kustomize wraps long base64 at 70 columns). */
const text = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>, links: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'mooring-sops-fs-'));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  for (const [rel, target] of Object.entries(links)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    symlinkSync(target, join(root, rel));
  }
  return root;
}

/** Builds `path` as render does, counting the passes. */
async function buildAt(root: string, path: string) {
  let passes = 0;
  const objects = await buildDecrypting(
    () => createConfinedFs(root),
    keys,
    async (fs: ConfinedFs) => {
      passes++;
      const resources = await build(fs, path, { generateWhenMissing: true, loadRestrictions: 'none' });
      return resources.map((r) => r.object);
    },
  );
  return { objects, passes };
}

const byName = (objects: JsonObject[], name: string) =>
  objects.find((o) => (o.metadata as JsonObject).name === name) as
    | (JsonObject & { data?: Record<string, string>; stringData?: Record<string, string> })
    | undefined;

async function refused(root: string, path: string, file: string, message: RegExp): Promise<void> {
  const err = await buildAt(root, path).then(
    () => assert.fail('the build should have been refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof FileDecryptionError, `expected a FileDecryptionError, got ${String(err)}`);
  assert.equal(err.file, file);
  assert.ok(err.message.startsWith(`decrypting ${file}: `), err.message);
  assert.match(err.message, message);
}

describe('buildDecrypting', () => {
  test('SOPS isolation: a tampered file outside what the build reads is never decrypted', async () => {
    const root = tree({
      'apps/web/db.yaml': read('secret-stringdata.enc.yaml'),
      'apps/broken/secret.yaml': read('unencrypted-regex.tampered.enc.yaml'),
      'apps/broken/app.env': read('app.tampered.enc.env'),
    });
    const { objects } = await buildAt(root, 'apps/web');
    assert.equal(objects.length, 1);
    assert.equal(byName(objects, 'db-credentials')?.stringData?.password, 's3cr3t-Pa55word');
    // The same tree, a path that includes the tampered manifest (a plain-YAML directory).
    await refused(root, 'apps', 'apps/broken/secret.yaml', /MAC mismatch/);
  });

  test('generator inputs and resources outside spec.path are decrypted as read; a tampered one read fails', async () => {
    const files = {
      'clusters/prod/kustomization.yaml': `resources:
  - ../../base/db.yaml
secretGenerator:
  - name: app
    envs: [../../shared/app.enc.env]
    files:
      - config.json=../../shared/config.enc.json
      - blob=../../shared/blob.enc.bin
      - settings.yaml=../../shared/settings.enc.yaml
    options: { disableNameSuffixHash: true }
`,
      'base/db.yaml': read('secret-stringdata.enc.yaml'),
      'shared/app.enc.env': read('app.enc.env'),
      'shared/config.enc.json': read('config.enc.json'),
      'shared/blob.enc.bin': read('blob.enc.bin'),
      'shared/settings.enc.yaml': read('settings.enc.yaml'),
      'shared/unused.enc.env': read('app.tampered.enc.env'),
      'clusters/staging/kustomization.yaml': `secretGenerator:
  - name: app
    envs: [../../shared/unused.enc.env]
`,
    };
    const root = tree(files);
    const { objects, passes } = await buildAt(root, 'clusters/prod');
    assert.equal(passes, 2);
    assert.equal(byName(objects, 'db-credentials')?.stringData?.username, 'admin');
    const app = byName(objects, 'app')?.data ?? {};
    assert.equal(text(app.DB_USER), 'admin');
    assert.equal(text(app.DB_PASSWORD), 'pa=ss#word');
    assert.equal(text(app['config.json']), read('config.plain.json'));
    assert.equal(text(app.blob), read('blob.plain.bin'));
    // decryptFile's rendering of a yaml file: sops's plaintext without the encrypted comments.
    assert.equal(text(app['settings.yaml']), await decryptFile(read('settings.enc.yaml'), 'yaml', keys));
    assert.match(text(app['settings.yaml']), /host: db\.internal/);
    // Nothing was decrypted in place.
    for (const [rel, text] of Object.entries(files))
      assert.equal(readFileSync(join(root, rel), 'utf8'), text);
    await refused(root, 'clusters/staging', 'shared/unused.enc.env', /MAC mismatch/);
  });

  test('a file read through a symlink is decrypted once and named as itself', async () => {
    const root = tree(
      {
        'secrets/db.enc.yaml': read('secret-stringdata.enc.yaml'),
        'secrets/bad.enc.yaml': read('secret-stringdata.tampered.enc.yaml'),
        'ok/kustomization.yaml': 'resources: [db.yaml]\n',
        'bad/kustomization.yaml': 'resources: [db.yaml]\n',
      },
      { 'ok/db.yaml': '../secrets/db.enc.yaml', 'bad/db.yaml': '../secrets/bad.enc.yaml' },
    );
    const { objects } = await buildAt(root, 'ok');
    assert.equal(byName(objects, 'db-credentials')?.stringData?.password, 's3cr3t-Pa55word');
    await refused(root, 'bad', 'secrets/bad.enc.yaml', /MAC mismatch/);
  });

  test('a manifest opted out with kustomize.mooring.dev/decrypt: Disabled is read as it is', async () => {
    // The annotation breaks the MAC; that must not matter, since the file is not decrypted.
    const optedOut = read('unencrypted-regex.enc.yaml').replace(
      '    name: partially-plain\n',
      '    name: partially-plain\n    annotations:\n        kustomize.mooring.dev/decrypt: Disabled\n',
    );
    assert.notEqual(optedOut, read('unencrypted-regex.enc.yaml'));
    const root = tree({ 'deploy/secret.yaml': optedOut });
    const { objects, passes } = await buildAt(root, 'deploy');
    assert.equal(passes, 1);
    const secret = byName(objects, 'partially-plain');
    assert.ok(secret?.sops, 'the opted-out manifest was changed');
    assert.match(secret.stringData?.apiKey ?? '', /^ENC\[AES256_GCM,/);
  });

  test('a tree without encrypted files builds in one pass', async () => {
    const root = tree({ 'deploy/plain.yaml': read('secret-stringdata.plain.yaml') });
    const { objects, passes } = await buildAt(root, 'deploy');
    assert.equal(passes, 1);
    assert.equal(byName(objects, 'db-credentials')?.stringData?.password, 's3cr3t-Pa55word');
  });
});
