import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialsFromDockerConfig } from './docker-config.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('reads auth (base64 user:password, password may hold colons)', () => {
  const json = JSON.stringify({ auths: { 'ghcr.io': { auth: b64('bot:pa:ss') } } });
  assert.deepEqual(credentialsFromDockerConfig(json, 'ghcr.io'), { username: 'bot', password: 'pa:ss' });
});

test('reads username/password and identitytoken fields', () => {
  const json = JSON.stringify({
    auths: {
      '127.0.0.1:5000': { username: 'u', password: 'p' },
      'myreg.azurecr.io': { username: '00000000-0000-0000-0000-000000000000', identitytoken: 'refresh' },
    },
  });
  assert.deepEqual(credentialsFromDockerConfig(json, '127.0.0.1:5000'), { username: 'u', password: 'p' });
  assert.deepEqual(credentialsFromDockerConfig(json, 'myreg.azurecr.io'), {
    username: '00000000-0000-0000-0000-000000000000',
    identityToken: 'refresh',
  });
});

test('matches keys written as URLs and Docker Hub aliases; exact keys win', () => {
  const hub = JSON.stringify({ auths: { 'https://index.docker.io/v1/': { auth: b64('hub:pw') } } });
  for (const host of ['docker.io', 'index.docker.io', 'registry-1.docker.io']) {
    assert.deepEqual(credentialsFromDockerConfig(hub, host), { username: 'hub', password: 'pw' }, host);
  }
  const both = JSON.stringify({
    auths: { 'index.docker.io': { auth: b64('a:1') }, 'docker.io': { auth: b64('b:2') } },
  });
  assert.deepEqual(credentialsFromDockerConfig(both, 'docker.io'), { username: 'b', password: '2' });
  const scheme = JSON.stringify({ auths: { 'https://GHCR.io': { auth: b64('x:y') } } });
  assert.deepEqual(credentialsFromDockerConfig(scheme, 'ghcr.io'), { username: 'x', password: 'y' });
});

test('no entry for the host, or no auths at all, is undefined', () => {
  assert.equal(
    credentialsFromDockerConfig(JSON.stringify({ auths: { 'ghcr.io': { auth: b64('a:b') } } }), 'quay.io'),
    undefined,
  );
  assert.equal(credentialsFromDockerConfig('{}', 'ghcr.io'), undefined);
  assert.equal(
    credentialsFromDockerConfig(JSON.stringify({ auths: { 'ghcr.io': {} } }), 'ghcr.io'),
    undefined,
  );
});

test('broken documents fail clearly and never quote the secret', () => {
  const secret = 'TOP-SECRET-VALUE';
  const cases: [string, RegExp][] = [
    [`{"auths": {"ghcr.io": {"auth": "${secret}"`, /not valid JSON/],
    ['[1]', /"auths"|not a JSON object/],
    [JSON.stringify({ auths: 'x' }), /"auths" field that is not an object/],
    [JSON.stringify({ auths: { 'ghcr.io': 'x' } }), /entry for ghcr.io is not an object/],
    [JSON.stringify({ auths: { 'ghcr.io': { auth: b64(secret) } } }), /not base64 of user:password/],
  ];
  for (const [json, want] of cases) {
    assert.throws(
      () => credentialsFromDockerConfig(json, 'ghcr.io'),
      (err: Error) =>
        want.test(err.message) && !err.message.includes(secret) && !err.message.includes(b64(secret)),
      json,
    );
  }
});
