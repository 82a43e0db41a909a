import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

interface KeyPair {
  crt: string;
  key: string;
  crtPem: string;
  keyPem: string;
}

let dir: string;
let server: KeyPair;
let other: KeyPair;

/** A self-signed P-256 certificate and its key, written by openssl. */
function keyPair(name: string): KeyPair {
  const crt = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      crt,
    ],
    { stdio: 'ignore' },
  );
  return { crt, key, crtPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** The base64 body lines of a PEM key: none may show up in anything but the Secret itself. */
const keyLines = (pem: string): string[] => pem.split('\n').filter((l) => l && !l.startsWith('-----'));

const assertNoKey = (text: string): void => {
  assert.doesNotMatch(text, /PRIVATE KEY/);
  for (const pair of [server, other])
    for (const line of keyLines(pair.keyPem)) assert.ok(!text.includes(line), 'key material in output');
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mooring-tls-'));
  server = keyPair('server');
  other = keyPair('ca');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (text: string): string => Buffer.from(text).toString('base64');

test('create secret tls --export prints a kubernetes.io/tls Secret the API server accepts', async (t) => {
  const ns = await testNamespace(t, 'cli-tls-export');
  const { client, kubeconfig } = await testCluster();
  const r = await mooring(
    [
      'create',
      'secret',
      'tls',
      'web-tls',
      '--cert-file',
      server.crt,
      '--key-file',
      server.key,
      '--ca-crt-file',
      other.crt,
      '-n',
      ns,
      '--export',
    ],
    { env: { KUBECONFIG: kubeconfig } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
  assert.equal(docs.length, 1);
  const secret = docs[0]!;
  assert.equal(secret.kind, 'Secret');
  assert.equal(secret.type, 'kubernetes.io/tls');
  assert.deepEqual(secret.metadata, { name: 'web-tls', namespace: ns });
  // Written as stringData, as `flux create secret tls --export` does; the server stores it base64.
  assert.deepEqual(secret.stringData, {
    'tls.crt': server.crtPem,
    'tls.key': server.keyPem,
    'ca.crt': other.crtPem,
  });
  const stored = await client.apply(secret, { fieldManager: 'mooring-cli-test', dryRun: true });
  assert.deepEqual(stored.data, {
    'tls.crt': b64(server.crtPem),
    'tls.key': b64(server.keyPem),
    'ca.crt': b64(other.crtPem),
  });
  // --export applied nothing.
  assert.equal(
    await client.getOrUndefined({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'web-tls' }),
    undefined,
  );
});

test('create secret tls applies the Secret to the cluster without printing the key', async (t) => {
  const ns = await testNamespace(t, 'cli-tls-apply');
  const { client, kubeconfig } = await testCluster();
  const r = await mooring(
    ['create', 'secret', 'tls', 'web-tls', '--cert-file', server.crt, '--key-file', server.key, '-n', ns],
    { env: { KUBECONFIG: kubeconfig } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `✔ Secret ${ns}/web-tls applied\n`);
  assertNoKey(r.stdout + r.stderr);
  const live = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'web-tls' });
  assert.equal(live.type, 'kubernetes.io/tls');
  assert.deepEqual(live.data, { 'tls.crt': b64(server.crtPem), 'tls.key': b64(server.keyPem) });
  assert.equal((live.metadata.managedFields as { manager: string }[])[0]?.manager, 'mooring-cli');
});

test('create secret tls refuses a key that does not match, or files that are not PEM, naming the file', async (t) => {
  const ns = await testNamespace(t, 'cli-tls-bad');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const create = (crt: string, key: string) =>
    mooring(['create', 'secret', 'tls', 'bad', '--cert-file', crt, '--key-file', key, '-n', ns], { env });

  const [mismatched, keyAsCert, certAsKey] = await Promise.all([
    create(server.crt, other.key),
    create(server.key, server.key),
    create(server.crt, server.crt),
  ]);
  assert.equal(mismatched.code, 2);
  assert.equal(
    mismatched.stderr,
    `✗ --key-file ${other.key} does not match the certificate in ${server.crt}: pass the key the certificate was issued for.\n`,
  );
  assert.equal(keyAsCert.code, 2);
  assert.match(keyAsCert.stderr, new RegExp(`--cert-file ${server.key} is not a PEM certificate`));
  assert.equal(certAsKey.code, 2);
  assert.match(
    certAsKey.stderr,
    new RegExp(`--key-file ${server.crt} is not an unencrypted PEM private key`),
  );
  for (const r of [mismatched, keyAsCert, certAsKey]) {
    assert.equal(r.stdout, '');
    assertNoKey(r.stderr);
  }
  assert.equal(
    await client.getOrUndefined({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'bad' }),
    undefined,
  );
});
