import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeCredentials } from './kube-credentials.ts';
import { parseUntrustedKubeConfig, UntrustedKubeConfigError } from './untrusted-kubeconfig.ts';

// A file standing in for the operator's service-account token.
const dir = mkdtempSync(join(tmpdir(), 'mooring-kubeconfig-'));
const tokenPath = join(dir, 'token');
writeFileSync(tokenPath, 'operator-own-token-marker');
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(user: string, cluster = "server: 'https://203.0.113.7:6443'"): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {${cluster}}}]
users: [{name: u, user: {${user}}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: apps}}]
current-context: x
`;
}

describe('credential files: a tenant kubeconfig never makes the operator read its own files', () => {
  it('the library alone would read token-file while parsing (why the allow-list exists)', () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig(`token-file: '${tokenPath}'`));
    assert.equal(kc.getCurrentUser()?.token, 'operator-own-token-marker');
  });

  const refused: [string, string, RegExp][] = [
    ['token-file', `token-file: '${tokenPath}'`, /token file on the operator/],
    ['tokenFile', `tokenFile: '${tokenPath}'`, /token file on the operator/],
    ['client-certificate', `client-certificate: '${tokenPath}'`, /certificate file/],
    ['client-key', `client-key: '${tokenPath}'`, /key file/],
    [
      'exec',
      'exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}',
      /exec credential plugin/,
    ],
    ['auth-provider', `auth-provider: {name: x, config: {tokenFile: '${tokenPath}'}}`, /auth provider/],
    ['as (impersonation)', 'as: system:admin', /impersonates/],
    ['an unknown field', 'surprise: 1', /'surprise', which Mooring does not accept/],
  ];
  for (const [what, user, message] of refused) {
    it(`refuses ${what} in a user`, () => {
      assert.throws(
        () => parseUntrustedKubeConfig(kubeconfig(user)),
        (err: unknown) => err instanceof UntrustedKubeConfigError && message.test(err.message),
      );
    });
  }

  it('refuses a CA file path and a proxy in a cluster', () => {
    assert.throws(
      () =>
        parseUntrustedKubeConfig(
          kubeconfig('token: t', `server: 'https://x', certificate-authority: '${tokenPath}'`),
        ),
      /CA file/,
    );
    assert.throws(
      () => parseUntrustedKubeConfig(kubeconfig('token: t', "server: 'https://x', proxy-url: 'http://p'")),
      /proxy-url/,
    );
  });

  it('refuses a refused field in a user the current context does not even use', () => {
    const text = kubeconfig('token: t').replace(
      'users: [{name: u, user: {token: t}}]',
      `users: [{name: u, user: {token: t}}, {name: other, user: {token-file: '${tokenPath}'}}]`,
    );
    assert.throws(() => parseUntrustedKubeConfig(text), /token file/);
  });

  it('refuses a YAML alias bomb, a non-URL server and a missing context', () => {
    const bomb = `preferences:
  a: &a [x, x, x, x, x, x, x, x, x]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]
`;
    assert.throws(() => parseUntrustedKubeConfig(bomb), /alias/i);
    assert.throws(
      () => parseUntrustedKubeConfig(kubeconfig('token: t', "server: 'file:///etc/passwd'")),
      /https/,
    );
    assert.throws(
      () =>
        parseUntrustedKubeConfig(kubeconfig('token: t').replace('current-context: x', 'current-context: y')),
      /current-context 'y'/,
    );
  });

  it('keeps inline credentials: server, CA data, token, client certificate and key data', async () => {
    const kc = parseUntrustedKubeConfig(
      kubeconfig(
        'token: inline-token, client-certificate-data: Y2VydA==, client-key-data: a2V5',
        "server: 'https://203.0.113.7:6443', certificate-authority-data: Y2E=, tls-server-name: api.internal",
      ),
    );
    const cluster = kc.getCurrentCluster();
    assert.equal(cluster?.server, 'https://203.0.113.7:6443');
    assert.equal(cluster?.caData, 'Y2E=');
    assert.equal(cluster?.tlsServerName, 'api.internal');
    assert.equal(kc.getCurrentUser()?.token, 'inline-token');
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'apps');
    const credentials = new KubeCredentials(kc);
    assert.equal((await credentials.headers()).Authorization, 'Bearer inline-token');
    assert.equal(String((await credentials.tls()).cert), 'cert');
  });
});
