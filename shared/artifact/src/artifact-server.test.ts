import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { type ArtifactServerLogLine, startArtifactServer } from './artifact-server.ts';
import { ArtifactStorage } from './storage.ts';

const SECRET = 'top-secret-token-do-not-serve';

async function setup(t: TestContext) {
  const base = await mkdtemp(join(tmpdir(), 'mooring-server-test-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'data');
  await mkdir(join(base, 'outside'), { recursive: true });
  await writeFile(join(base, 'secret'), SECRET);
  await writeFile(join(base, 'outside', 'secret'), SECRET);
  const storage = new ArtifactStorage({ root, advertisedBase: 'http://unused' });
  const src = join(base, 'src');
  await mkdir(src);
  await writeFile(join(src, 'app.yaml'), 'kind: ConfigMap\n');
  const artifact = await storage.archive(
    { kind: 'GitRepository', namespace: 'flux-system', name: 'podinfo' },
    src,
  );
  const folder = join(root, 'gitrepository', 'flux-system', 'podinfo');
  // Hostile neighbours: links leading out, a hidden temp file and a file whose name is no digest.
  await symlink(join(base, 'secret'), join(folder, 'evil.tar.gz'));
  await symlink(join(base, 'outside'), join(root, 'linkdir'));
  await writeFile(join(folder, '.tmp-1234.tar.gz'), SECRET);
  await writeFile(join(folder, 'index.yaml'), 'entries: {}\n');
  const logs: ArtifactServerLogLine[] = [];
  const server = await startArtifactServer({ root, host: '127.0.0.1', port: 0, log: (l) => logs.push(l) });
  t.after(() => server.close());
  return { server, artifact, root, logs };
}

/** Sends one request line exactly as given (no URL normalisation) and returns status and body. */
function rawGet(port: number, path: string, method = 'GET'): Promise<{ status: number; raw: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(raw.slice(9, 12)), raw });
    });
    sock.write(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, 'latin1');
  });
}

describe('startArtifactServer', () => {
  it('serves an artifact with its bytes, type, length and digest ETag', async (t) => {
    const { server, artifact, root, logs } = await setup(t);
    const res = await fetch(`${server.url}/${artifact.path}`);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200);
    assert.ok(body.equals(await readFile(join(root, artifact.path))));
    assert.equal(res.headers.get('content-type'), 'application/gzip');
    assert.equal(res.headers.get('content-length'), String(artifact.size));
    assert.equal(res.headers.get('etag'), `"${artifact.digest}"`);
    assert.equal(`sha256:${createHash('sha256').update(body).digest('hex')}`, artifact.digest);
    assert.equal(logs.at(-1)?.status, 200);
    assert.equal(logs.at(-1)?.bytes, artifact.size);
  });

  it('answers HEAD with headers only', async (t) => {
    const { server, artifact } = await setup(t);
    const res = await fetch(`${server.url}/${artifact.path}`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(artifact.size));
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  it('answers 304 to a matching If-None-Match and 200 to a stale one', async (t) => {
    const { server, artifact } = await setup(t);
    const url = `${server.url}/${artifact.path}`;
    const hit = await fetch(url, {
      headers: { 'If-None-Match': `"sha256:${'0'.repeat(64)}", "${artifact.digest}"` },
    });
    assert.equal(hit.status, 304);
    assert.equal(hit.headers.get('etag'), `"${artifact.digest}"`);
    const miss = await fetch(url, { headers: { 'If-None-Match': `"sha256:${'0'.repeat(64)}"` } });
    assert.equal(miss.status, 200);
    await miss.arrayBuffer();
  });

  it('hashes files whose name is not a digest for their ETag', async (t) => {
    const { server } = await setup(t);
    const res = await fetch(`${server.url}/gitrepository/flux-system/podinfo/index.yaml`);
    assert.equal(await res.text(), 'entries: {}\n');
    const hex = createHash('sha256').update('entries: {}\n').digest('hex');
    assert.equal(res.headers.get('etag'), `"sha256:${hex}"`);
  });

  it('refuses methods other than GET and HEAD with 405', async (t) => {
    const { server, artifact } = await setup(t);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${server.url}/${artifact.path}`, {
        method,
        body: method === 'DELETE' ? null : 'x',
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      await res.arrayBuffer();
    }
  });

  it('lists no directories and 404s unknown files', async (t) => {
    const { server } = await setup(t);
    for (const path of [
      '/',
      '/gitrepository',
      '/gitrepository/',
      '/gitrepository/flux-system/podinfo',
      '/nope.tar.gz',
    ]) {
      const res = await rawGet(server.port, path);
      assert.ok(res.status === 404 || res.status === 400, `${path} → ${res.status}`);
      assert.doesNotMatch(res.raw, /flux-system|podinfo\//, path);
    }
  });

  it('never serves anything outside the root or through a symlink, whatever the encoding', async (t) => {
    const { server } = await setup(t);
    const hostile = [
      '/../secret',
      '/gitrepository/../../secret',
      '/%2e%2e/secret',
      '/%2E%2E/%2e%2e/secret',
      '/gitrepository/%2e%2e/%2e%2e/secret',
      '/..%2fsecret',
      '/%2e%2e%2fsecret',
      '/gitrepository%2f..%2f..%2fsecret',
      '/..\\secret',
      '/%5c..%5csecret',
      '/gitrepository/flux-system/podinfo/index.yaml%00.tar.gz',
      '/secret%00',
      '/%ff%fe',
      '/linkdir/secret',
      '/gitrepository/flux-system/podinfo/evil.tar.gz',
      '/gitrepository/flux-system/podinfo/.tmp-1234.tar.gz',
      '//secret',
      `/${'../'.repeat(20)}etc/passwd`,
    ];
    for (const path of hostile) {
      const res = await rawGet(server.port, path);
      assert.ok(res.status === 400 || res.status === 404, `${path} → ${res.status}`);
      assert.ok(!res.raw.includes(SECRET), `${path} leaked the secret`);
      assert.ok(!res.raw.includes('root:'), `${path} leaked /etc/passwd`);
    }
  });

  it('stops cleanly and frees its port', async (t) => {
    const { server } = await setup(t);
    await server.close();
    await assert.rejects(fetch(`${server.url}/x`));
  });
});
