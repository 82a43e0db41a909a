import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Provider } from '@mooring/api';
import type { KubeClient } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { type ProviderConfigError, resolveProvider } from '../src/provider-config.ts';

const TOKEN = 'cfg-SECRET-c0ffee';
let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

const provider = (namespace: string, spec: Provider['spec']): Provider => ({
  apiVersion: 'notification.mooring.dev/v1',
  kind: 'Provider',
  metadata: { namespace, name: 'p', uid: 'uid-1' },
  spec,
});

test('resolveProvider reads the secret’s address, token, basic auth, headers and CA', async (t) => {
  const ns = await testNamespace(t, 'provider-config');
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 's' },
    stringData: {
      address: 'https://hooks.example/secret-path',
      token: `${TOKEN}\n`,
      username: 'u',
      password: 'pw',
      headers: 'X-Team: web\nX-Count: 3\n',
      'ca.crt': 'CA PEM',
    },
  });
  const c = await resolveProvider(
    client,
    provider(ns, {
      type: 'generic',
      address: 'https://ignored.example',
      secretRef: { name: 's' },
      timeout: '3s',
    }),
  );
  assert.equal(c.address, 'https://hooks.example/secret-path');
  assert.equal(c.token, TOKEN, 'trailing newline trimmed');
  assert.deepEqual(c.basicAuth, { username: 'u', password: 'pw' });
  assert.deepEqual(c.headers, { 'x-team': 'web', 'x-count': '3' });
  assert.deepEqual(c.tls, { ca: 'CA PEM' });
  assert.equal(c.timeoutMs, 3_000);
});

test('resolveProvider names what is wrong, stalls on spec errors, never shows the secret', async (t) => {
  const ns = await testNamespace(t, 'provider-config-bad');
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 'empty' },
    stringData: { other: TOKEN },
  });
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 'badheaders' },
    stringData: { headers: `- ${TOKEN}` },
  });
  const rows: [Provider['spec'], string, boolean, RegExp][] = [
    [{ type: 'zulip' }, 'UnsupportedType', true, /type zulip is not supported/],
    [{ type: 'slack', address: 'not a url' }, 'InvalidAddress', true, /spec\.address is not a valid URL/],
    [{ type: 'slack', address: 'ftp://x/y' }, 'InvalidAddress', true, /must be an http or https URL/],
    [{ type: 'slack' }, 'InvalidAddress', true, /no address/],
    [
      { type: 'github', address: 'https://github.com/o/r', secretRef: { name: 'empty' } },
      'TokenNotFound',
      false,
      /needs a 'token' key/,
    ],
    [
      { type: 'telegram', secretRef: { name: 'missing' } },
      'SecretNotFound',
      false,
      /Secret .*\/missing was not found/,
    ],
    [
      { type: 'matrix', address: 'https://m.example', secretRef: { name: 'empty' } },
      'TokenNotFound',
      false,
      /token/,
    ],
    [
      { type: 'generic', address: 'https://x.example', secretRef: { name: 'badheaders' } },
      'InvalidHeaders',
      false,
      /not a YAML map/,
    ],
  ];
  for (const [spec, reason, stalled, message] of rows) {
    const err = (await resolveProvider(client, provider(ns, spec)).catch(
      (e: ProviderConfigError) => e,
    )) as ProviderConfigError;
    assert.ok(err instanceof Error, `${reason}: expected an error`);
    assert.equal(err.reason, reason);
    assert.equal(err.stalled, stalled, `${reason} stalled`);
    assert.match(err.message, message);
    assert.ok(!err.message.includes(TOKEN));
  }
});
