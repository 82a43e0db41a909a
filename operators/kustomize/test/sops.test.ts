// SOPS decryption end to end: Secrets encrypted by the real sops binary (testdata/sops, made by
// hack/gen-sops-fixtures.ts) are committed to a real Git server, and the Kustomization decrypts
// them with the age key from a Secret, or refuses them without applying anything.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { testCluster, uniqueName } from '@mooring/test/harness';
import {
  condition,
  createKustomization,
  getObject,
  gitSource,
  type Stack,
  startStack,
  waitForKustomization,
} from './fixture.ts';

const DIR = join(import.meta.dirname, '../testdata/sops');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');

let stack: Stack;
let ns: string;

before(async () => {
  stack = await startStack('sops');
  ns = stack.namespace;
  const { client } = await testCluster();
  for (const [name, file] of [
    ['sops-age', 'age.agekey'],
    ['sops-wrong', 'wrong.agekey'],
  ]) {
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns },
      stringData: { 'age.agekey': read(file!) },
    });
  }
});
after(() => stack?.stop());

const secretValue = async (name: string, key: string) => {
  const secret = await getObject('v1', 'Secret', ns, name);
  const data = secret?.data as Record<string, string> | undefined;
  return data?.[key] === undefined ? undefined : Buffer.from(data[key]!, 'base64').toString('utf8');
};

/** A Kustomization over `files` that must end Ready=False; returns its Ready message. */
async function refusedWith(
  files: Record<string, string>,
  decryption?: Record<string, unknown>,
): Promise<string> {
  const { name: source } = await gitSource(stack, files);
  const name = uniqueName('refused');
  await createKustomization(stack, name, {
    sourceRef: { kind: 'GitRepository', name: source },
    path: './deploy',
    ...(decryption ? { decryption } : {}),
  });
  const failed = await waitForKustomization(
    ns,
    name,
    'False',
    (k) => condition(k, 'Ready')?.reason === 'BuildFailed',
  );
  const message = condition(failed, 'Ready')!.message;
  assert.equal(failed.status?.lastAppliedRevision ?? '', '');
  // The fixture's one secret value must never show up in status.
  assert.ok(
    !message.includes('ak-0123456789') && !message.includes('ak-evil'),
    'the Ready message carries plaintext',
  );
  return message;
}

describe('Kustomization with SOPS decryption', { concurrency: 4 }, () => {
  test('decrypts Secrets (stringData and data forms) with the age key and applies the plaintext', async () => {
    const { name: source } = await gitSource(stack, {
      'deploy/db.yaml': read('secret-stringdata.enc.yaml'),
      'deploy/token.yaml': read('secret-data.enc.yaml'),
    });
    const name = uniqueName('sops');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: './deploy',
      decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
    });
    await waitForKustomization(ns, name);
    assert.equal(await secretValue('db-credentials', 'password'), 's3cr3t-Pa55word');
    assert.equal(await secretValue('db-credentials', 'username'), 'admin');
    assert.equal(await secretValue('db-credentials', 'config.yaml'), 'host: db.internal\nport: 5432\n');
    assert.equal(await secretValue('api-token', 'token'), 'tok-9f8e7d6c5b4a');
    const db = await getObject('v1', 'Secret', ns, 'db-credentials');
    assert.equal(db?.metadata.labels?.team, 'payments');
  });

  test('the wrong age key: Ready False with a clear message, and no Secret', async () => {
    const message = await refusedWith(
      { 'deploy/secret.yaml': read('unencrypted-regex.enc.yaml') },
      { provider: 'sops', secretRef: { name: 'sops-wrong' } },
    );
    assert.match(message, /no age identity in the decryption Secret can decrypt/);
    assert.equal(await getObject('v1', 'Secret', ns, 'partially-plain'), undefined);
  });

  test('a file changed after encryption (MAC mismatch) is refused, and no Secret', async () => {
    const message = await refusedWith(
      { 'deploy/secret.yaml': read('unencrypted-regex.tampered.enc.yaml') },
      { provider: 'sops', secretRef: { name: 'sops-age' } },
    );
    assert.match(message, /MAC mismatch/);
    assert.equal(await getObject('v1', 'Secret', ns, 'partially-plain'), undefined);
  });

  test('an encrypted Secret without spec.decryption is refused, never applied as ciphertext', async () => {
    const message = await refusedWith({ 'deploy/secret.yaml': read('unencrypted-regex.enc.yaml') });
    assert.match(message, /refusing to apply ciphertext/);
    assert.equal(await getObject('v1', 'Secret', ns, 'partially-plain'), undefined);
  });

  test('SOPS isolation: a tampered file outside what the build reads breaks nobody', async () => {
    const { name: source } = await gitSource(stack, {
      // A plain-YAML directory (no kustomization.yaml): only the files under it are read.
      'apps/web/db.yaml': read('secret-stringdata.enc.yaml'),
      // A kustomization whose generator reads an encrypted env file outside its own path.
      'apps/worker/kustomization.yaml': `secretGenerator:
  - name: isolated-env
    envs: [../../shared/app.enc.env]
    options: { disableNameSuffixHash: true }
`,
      'shared/app.enc.env': read('app.enc.env'),
      // Tampered files in the same repository that neither of the above reads.
      'shared/old.enc.env': read('app.tampered.enc.env'),
      'apps/broken/secret.yaml': read('unencrypted-regex.tampered.enc.yaml'),
      // A kustomization that does read the tampered manifest, from outside its own path.
      'apps/reaches/kustomization.yaml': 'resources: [../broken/secret.yaml]\n',
    });
    const decryption = { provider: 'sops', secretRef: { name: 'sops-age' } };
    const sourceRef = { kind: 'GitRepository', name: source };
    const names = {
      web: uniqueName('isolated-web'),
      worker: uniqueName('isolated-worker'),
      broken: uniqueName('isolated-broken'),
      reaches: uniqueName('isolated-reaches'),
    };
    // The prefix keeps this Secret apart from the one the first test applies from the same fixture.
    await createKustomization(stack, names.web, {
      sourceRef,
      path: './apps/web',
      decryption,
      namePrefix: 'isolated-',
    });
    await createKustomization(stack, names.worker, { sourceRef, path: './apps/worker', decryption });
    await createKustomization(stack, names.broken, { sourceRef, path: './apps/broken', decryption });
    await createKustomization(stack, names.reaches, { sourceRef, path: './apps/reaches', decryption });

    const failed = async (name: string) => {
      const k = await waitForKustomization(
        ns,
        name,
        'False',
        (o) => condition(o, 'Ready')?.reason === 'BuildFailed',
        120_000,
      );
      assert.equal(k.status?.lastAppliedRevision ?? '', '');
      const message = condition(k, 'Ready')!.message;
      assert.ok(
        !message.includes('ak-0123456789') && !message.includes('ak-evil'),
        'the Ready message carries plaintext',
      );
      return message;
    };
    const [, , brokenMessage, reachesMessage] = await Promise.all([
      waitForKustomization(ns, names.web, 'True', undefined, 120_000),
      waitForKustomization(ns, names.worker, 'True', undefined, 120_000),
      failed(names.broken),
      failed(names.reaches),
    ]);
    assert.equal(await secretValue('isolated-db-credentials', 'password'), 's3cr3t-Pa55word');
    assert.equal(await secretValue('isolated-env', 'DB_PASSWORD'), 'pa=ss#word');
    // Read inside its path or from outside it, the tampered file fails, named.
    for (const message of [brokenMessage, reachesMessage])
      assert.match(message, /^decrypting apps\/broken\/secret\.yaml: .*MAC mismatch/);
    assert.equal(await getObject('v1', 'Secret', ns, 'partially-plain'), undefined);
  });
});
