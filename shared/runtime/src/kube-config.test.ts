// Mooring's own kubeconfig loading (kube-config.ts, kube-credentials.ts), which replaced
// @kubernetes/client-node's: files, the $KUBECONFIG list, in-cluster from a service-account folder,
// and the TLS options and headers each kind of credential gives. Real files and a real exec plugin
// (a node script); no API server.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig } from './kube-config.ts';
import { KubeCredentials } from './kube-credentials.ts';

const dir = mkdtempSync(join(tmpdir(), 'mooring-kube-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function kubeconfig(user: string, cluster = 'server: https://203.0.113.7:6443/', extra = ''): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {${cluster}}}]
users: [{name: u, user: {${user}}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: apps}}${extra}]
current-context: x
`;
}

describe('kubeconfig files', () => {
  it('reads the current context, cluster (trailing slash dropped) and user', () => {
    const kc = new KubeConfig();
    kc.loadFromFile(file('plain', kubeconfig(`token: t, client-certificate-data: ${b64('cert')}`)));
    assert.equal(kc.getCurrentContext(), 'x');
    assert.equal(kc.getCurrentCluster()?.server, 'https://203.0.113.7:6443');
    assert.equal(kc.getCurrentUser()?.token, 't');
    assert.equal(kc.getContextObject('x')?.namespace, 'apps');
  });

  it('resolves CA, certificate, key and token files relative to the kubeconfig, read when connecting', async () => {
    file('ca.pem', 'the-ca');
    file('client.pem', 'the-cert');
    file('client-key.pem', 'the-key');
    file('token', 'file-token\n');
    const kc = new KubeConfig();
    kc.loadFromFile(
      file(
        'relative',
        kubeconfig(
          'client-certificate: client.pem, client-key: ./client-key.pem, token-file: token',
          'server: https://203.0.113.7:6443, certificate-authority: ca.pem, tls-server-name: api.internal',
        ),
      ),
    );
    const credentials = new KubeCredentials(kc);
    const tls = await credentials.tls();
    assert.deepEqual(
      [String(tls.ca), String(tls.cert), String(tls.key), tls.servername],
      ['the-ca', 'the-cert', 'the-key', 'api.internal'],
    );
    assert.equal((await credentials.headers()).Authorization, 'Bearer file-token');
    // A rotated token is read again.
    file('token', 'rotated-token');
    assert.equal((await credentials.headers()).Authorization, 'Bearer rotated-token');
  });

  it('merges a $KUBECONFIG list as kubectl does: the first file to define a name or a current context wins', () => {
    const first = file('first', kubeconfig('token: first'));
    const second = file(
      'second',
      kubeconfig('token: second', 'server: https://second', ', {name: y, context: {cluster: c}}').replace(
        'current-context: x',
        'current-context: y',
      ),
    );
    const kc = new KubeConfig();
    kc.loadFromDefault({ KUBECONFIG: `${first}::${second}` });
    assert.equal(kc.getCurrentContext(), 'x');
    assert.equal(kc.getCurrentUser()?.token, 'first');
    assert.deepEqual(
      kc.getContexts().map((c) => c.name),
      ['x', 'y'],
    );
  });

  it('names the entry that is incomplete', () => {
    const kc = new KubeConfig();
    assert.throws(
      () => kc.loadFromString(kubeconfig('token: t', 'insecure-skip-tls-verify: true')),
      /clusters\[0\]\.cluster\.server is missing/,
    );
  });

  it('refuses plain HTTP unless the cluster turns TLS checks off, in the words the CLI recognises', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig('token: t', 'server: http://127.0.0.1:8080'));
    await assert.rejects(new KubeCredentials(kc).tls(), /HTTP protocol is not allowed/);
    kc.loadFromString(
      kubeconfig('token: t', 'server: http://127.0.0.1:8080, insecure-skip-tls-verify: true'),
    );
    assert.equal((await new KubeCredentials(kc).tls()).rejectUnauthorized, false);
  });
});

describe('in-cluster', () => {
  it('reads the API server from the environment and CA, token and namespace from the service-account folder', async () => {
    const sa = mkdtempSync(join(dir, 'serviceaccount-'));
    writeFileSync(join(sa, 'ca.crt'), 'cluster-ca');
    writeFileSync(join(sa, 'token'), 'sa-token');
    writeFileSync(join(sa, 'namespace'), 'mooring-system');
    const kc = new KubeConfig();
    kc.loadFromCluster(sa, { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' });
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.96.0.1:443');
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'mooring-system');
    const credentials = new KubeCredentials(kc);
    assert.equal(String((await credentials.tls()).ca), 'cluster-ca');
    assert.equal((await credentials.headers()).Authorization, 'Bearer sa-token');
    // The kubelet rotates the projected token in place.
    writeFileSync(join(sa, 'token'), 'sa-token-2');
    assert.equal((await credentials.headers()).Authorization, 'Bearer sa-token-2');

    kc.loadFromCluster(sa, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' });
    assert.equal(kc.getCurrentCluster()?.server, 'https://[fd00::1]:6443');
  });

  it('has no namespace when the folder has none', () => {
    const sa = mkdtempSync(join(dir, 'serviceaccount-'));
    const kc = new KubeConfig();
    kc.loadFromCluster(sa, { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' });
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, undefined);
  });
});

describe('credentials', () => {
  it('basic auth and the user impersonation fields become headers', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      kubeconfig(
        "username: admin, password: 's3cret', as: jane, as-uid: '42', as-groups: [dev, ops], as-user-extra: {scopes: [a, b]}",
      ),
    );
    assert.deepEqual(await new KubeCredentials(kc).headers(), {
      Authorization: `Basic ${b64('admin:s3cret')}`,
      'Impersonate-User': 'jane',
      'Impersonate-Uid': '42',
      'Impersonate-Group': ['dev', 'ops'],
      'Impersonate-Extra-scopes': ['a', 'b'],
    });
  });

  it('runs an exec plugin with its args and env, and uses its token until it expires', async () => {
    const count = file('exec-count', '');
    const plugin = file(
      'plugin.mjs',
      `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(count)}, 'x');
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential',
  status: { token: process.argv[2] + '-' + process.env.PLUGIN_SUFFIX + '-' + info.spec.interactive,
    expirationTimestamp: new Date(Date.now() + 3600e3).toISOString() } }));
`,
    );
    const kc = new KubeConfig();
    kc.loadFromString(
      kubeconfig(
        `exec: {apiVersion: client.authentication.k8s.io/v1, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(plugin)}, exec-token], env: [{name: PLUGIN_SUFFIX, value: ok}]}`,
      ),
    );
    const credentials = new KubeCredentials(kc);
    assert.equal((await credentials.headers()).Authorization, 'Bearer exec-token-ok-false');
    await credentials.tls();
    await credentials.headers();
    const { readFileSync } = await import('node:fs');
    assert.equal(readFileSync(count, 'utf8'), 'x', 'the plugin ran once: its token had not expired');
  });

  it('says which plugin failed and why, from its stderr', async () => {
    const plugin = file('failing.sh', '#!/bin/sh\necho "login required" >&2\nexit 3\n');
    chmodSync(plugin, 0o755);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig(`exec: {command: ${JSON.stringify(plugin)}}`));
    await assert.rejects(new KubeCredentials(kc).headers(), /failing\.sh exited with 3: login required/);
    kc.loadFromString(kubeconfig(`exec: {command: ${JSON.stringify(join(dir, 'missing'))}}`));
    await assert.rejects(new KubeCredentials(kc).headers(), /missing could not run: .*ENOENT/);
  });

  it('leaves an auth provider to @kubernetes/client-node, loaded for it alone', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig('auth-provider: {name: gcp, config: {access-token: provider-token}}'));
    assert.equal((await new KubeCredentials(kc).headers()).Authorization, 'Bearer provider-token');
  });
});
