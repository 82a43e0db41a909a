import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import https from 'node:https';
import { test } from 'node:test';
import { TestRegistry } from './registry.ts';

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  return (await fetch(url, { headers })).status;
}

test('starts an anonymous registry, serves /v2/, and close() stops it and removes its files', async () => {
  const registry = await TestRegistry.start();
  assert.match(registry.host, /^127\.0\.0\.1:\d+$/);
  assert.equal(registry.url('a/b'), `oci://${registry.host}/a/b`);
  assert.equal(await status(`http://${registry.host}/v2/`), 200);
  await registry.close();
  assert.equal(existsSync(registry.root), false);
  await assert.rejects(fetch(`http://${registry.host}/v2/`));
});

test('htpasswd: anonymous is 401 Basic, the right user is 200', async () => {
  const registry = await TestRegistry.start({ htpasswd: { username: 'u', password: 'p' } });
  try {
    const res = await fetch(`http://${registry.host}/v2/`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
    const basic = `Basic ${Buffer.from('u:p').toString('base64')}`;
    assert.equal(await status(`http://${registry.host}/v2/`, { Authorization: basic }), 200);
  } finally {
    await registry.close();
  }
});

test('token: the registry accepts a JWT from the token server and refuses without one', async () => {
  const registry = await TestRegistry.start({ htpasswd: { username: 'u', password: 'p' }, token: true });
  try {
    const res = await fetch(`http://${registry.host}/v2/x/tags/list`);
    assert.equal(res.status, 401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.ok(challenge.startsWith(`Bearer realm="${registry.tokenServer!.realm}"`), challenge);
    const url = `${registry.tokenServer!.realm}?service=${registry.tokenServer!.service}&scope=repository:x:pull`;
    assert.equal(
      await status(url, { Authorization: `Basic ${Buffer.from('u:wrong').toString('base64')}` }),
      401,
    );
    const tokenRes = await fetch(url, {
      headers: { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
    });
    const { token } = (await tokenRes.json()) as { token: string };
    // 404 NAME_UNKNOWN: past auth, the repository just does not exist yet.
    assert.equal(
      await status(`http://${registry.host}/v2/x/tags/list`, { Authorization: `Bearer ${token}` }),
      404,
    );
    assert.equal(
      await status(`http://${registry.host}/v2/y/tags/list`, { Authorization: `Bearer ${token}` }),
      401,
    );
  } finally {
    await registry.close();
  }
});

test('tls: serves HTTPS with a certificate the caller can trust via caCert', async () => {
  const registry = await TestRegistry.start({ tls: true });
  try {
    assert.match(registry.caCert ?? '', /BEGIN CERTIFICATE/);
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`https://${registry.host}/v2/`, { ca: registry.caCert }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    assert.equal(status, 200);
    await assert.rejects(fetch(`https://${registry.host}/v2/`));
  } finally {
    await registry.close();
  }
});
