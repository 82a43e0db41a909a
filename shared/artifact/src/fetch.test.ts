import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startTempOwner } from '../test/owned-temp-process.ts';
import { buildTarGz } from '../test/tar-fixtures.ts';
import { startArtifactServer } from './artifact-server.ts';
import {
  ArtifactFetchError,
  ArtifactNotFoundError,
  ArtifactTooLargeError,
  DigestMismatchError,
  UnsafeArchiveError,
  UnsupportedDigestError,
} from './errors.ts';
import { fetchArtifact } from './fetch.ts';
import { ArtifactStorage, type StoredArtifact } from './storage.ts';

const ref = { kind: 'GitRepository', namespace: 'apps', name: 'podinfo' };

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-fetch-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A stored artifact of a two-file tree, and its bytes. */
async function makeArtifact(
  base: string,
  tag = 'v1',
): Promise<{ artifact: StoredArtifact; bytes: Buffer; root: string }> {
  const src = join(base, `src-${tag}`);
  await mkdir(join(src, 'deploy'), { recursive: true });
  await writeFile(join(src, 'deploy', 'app.yaml'), `tag: ${tag}\n`);
  await writeFile(join(src, 'kustomization.yaml'), 'resources: [deploy/app.yaml]\n');
  const root = join(base, 'storage');
  const storage = new ArtifactStorage({ root, advertisedBase: 'http://unused' });
  const artifact = await storage.archive(ref, src);
  return { artifact, bytes: await readFile(join(root, artifact.path)), root };
}

/** A loopback server whose handler sees the request number (0-based). */
async function misbehaving(
  t: TestContext,
  handler: (n: number, ...args: Parameters<RequestListener>) => void,
) {
  let n = 0;
  const server = createServer((req, res) => handler(n++, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a.tar.gz`, requests: () => n };
}

const fast = { retryBaseMs: 5, timeoutMs: 5000 };

describe('fetchArtifact', () => {
  it('downloads, verifies and extracts an artifact served by the artifact server', async (t) => {
    const base = await tempDir(t);
    const { artifact, root } = await makeArtifact(base);
    const server = await startArtifactServer({ root, host: '127.0.0.1', port: 0 });
    t.after(() => server.close());
    const got = await fetchArtifact({
      url: `${server.url}/${artifact.path}`,
      digest: artifact.digest,
      ...fast,
    });
    try {
      assert.equal(got.bytes, artifact.size);
      assert.equal(got.files, 2);
      assert.equal(await readFile(join(got.dir, 'deploy', 'app.yaml'), 'utf8'), 'tag: v1\n');
    } finally {
      await got.cleanup();
    }
    assert.equal(existsSync(got.dir), false, 'cleanup removes the directory');
  });

  it('extracts into a given destDir and leaves no download behind', async (t) => {
    const base = await tempDir(t);
    const { artifact, bytes } = await makeArtifact(base);
    const { url } = await misbehaving(t, (_n, _req, res) => res.end(bytes));
    await mkdir(join(base, 'work'));
    const got = await fetchArtifact({
      url,
      digest: artifact.digest,
      destDir: join(base, 'out'),
      workDir: join(base, 'work'),
      ...fast,
    });
    assert.equal(got.dir, join(base, 'out'));
    assert.deepEqual((await readdir(got.dir)).sort(), ['deploy', 'kustomization.yaml']);
    assert.deepEqual(await readdir(join(base, 'work')), []);
  });

  it("removes the temp directories a killed process left in its work dir, and keeps a live one's", async (t) => {
    const base = await tempDir(t);
    const { artifact, bytes } = await makeArtifact(base);
    const { url } = await misbehaving(t, (_n, _req, res) => res.end(bytes));
    const work = join(base, 'work');
    await mkdir(work);
    // A process that died mid-fetch (SIGKILL: no cleanup ran), and one still at work.
    const crashed = await startTempOwner(work, 'fetch');
    const running = await startTempOwner(work, 'fetch');
    t.after(() => running.kill());
    await crashed.kill();
    const got = await fetchArtifact({
      url,
      digest: artifact.digest,
      destDir: join(base, 'out'),
      workDir: work,
      ...fast,
    });
    assert.equal(got.files, 2);
    assert.equal(existsSync(crashed.dir), false, "the dead process's download dir was left");
    assert.equal(existsSync(crashed.scratch), false, "the dead process's extraction scratch was left");
    assert.deepEqual((await readdir(work)).sort(), [basename(running.dir), basename(running.scratch)].sort());
  });

  it('refuses bytes that do not match the digest and extracts nothing', async (t) => {
    const base = await tempDir(t);
    const { artifact } = await makeArtifact(base, 'v1');
    const other = await makeArtifact(join(base, 'other'), 'v2');
    const { url, requests } = await misbehaving(t, (_n, _req, res) => res.end(other.bytes));
    await mkdir(join(base, 'work'));
    await assert.rejects(
      fetchArtifact({
        url,
        digest: artifact.digest,
        destDir: join(base, 'out'),
        workDir: join(base, 'work'),
        ...fast,
      }),
      (err: Error) => {
        assert.ok(err instanceof DigestMismatchError);
        assert.ok(
          err.message.includes(`expected ${artifact.digest}, got ${other.artifact.digest}`),
          err.message,
        );
        return true;
      },
    );
    assert.equal(requests(), 1, 'a digest mismatch is not retried');
    assert.equal(existsSync(join(base, 'out')), false);
    assert.deepEqual(await readdir(join(base, 'work')), []);
  });

  it('refuses a hostile archive even when its digest matches, leaving nothing behind', async (t) => {
    const base = await tempDir(t);
    const hostile = await buildTarGz([
      { header: { name: 'ok.yaml', type: 'file' }, body: 'a: b\n' },
      { header: { name: '../escape.yaml', type: 'file' }, body: 'pwned' },
    ]);
    const digest = `sha256:${createHash('sha256').update(hostile).digest('hex')}`;
    const { url } = await misbehaving(t, (_n, _req, res) => res.end(hostile));
    await mkdir(join(base, 'work'));
    await assert.rejects(
      fetchArtifact({ url, digest, destDir: join(base, 'out'), workDir: join(base, 'work'), ...fast }),
      UnsafeArchiveError,
    );
    assert.deepEqual((await readdir(base)).sort(), ['work']);
    assert.deepEqual(await readdir(join(base, 'work')), []);
  });

  it('retries a 500 and succeeds on the next attempt', async (t) => {
    const base = await tempDir(t);
    const { artifact, bytes } = await makeArtifact(base);
    const { url, requests } = await misbehaving(t, (n, _req, res) => {
      if (n === 0) {
        res.statusCode = 500;
        res.end('boom');
      } else res.end(bytes);
    });
    const got = await fetchArtifact({ url, digest: artifact.digest, ...fast });
    t.after(() => got.cleanup());
    assert.equal(requests(), 2);
    assert.equal(got.files, 2);
  });

  it('gives up after the bounded retries on persistent 5xx', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => {
      res.statusCode = 503;
      res.end();
    });
    await assert.rejects(
      fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, retries: 2, ...fast }),
      (err: Error) =>
        err instanceof ArtifactFetchError &&
        err.statusCode === 503 &&
        /after 3 attempts: HTTP 503/.test(err.message),
    );
    assert.equal(requests(), 3);
  });

  it('maps 404 to ArtifactNotFoundError without retrying', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => {
      res.statusCode = 404;
      res.end();
    });
    await assert.rejects(
      fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, ...fast }),
      ArtifactNotFoundError,
    );
    assert.equal(requests(), 1);
  });

  it('does not retry other 4xx', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => {
      res.statusCode = 403;
      res.end();
    });
    await assert.rejects(
      fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, ...fast }),
      (err: Error) => err instanceof ArtifactFetchError && err.statusCode === 403,
    );
    assert.equal(requests(), 1);
  });

  it('times out a server that stalls mid-body and retries it', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => {
      res.writeHead(200, { 'Content-Length': 1000 });
      res.write('partial'); // and never more
    });
    // The message and the request count say the 200 ms deadline ended both attempts; no clock needed.
    await assert.rejects(
      fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, retries: 1, retryBaseMs: 5, timeoutMs: 200 }),
      (err: Error) =>
        err instanceof ArtifactFetchError && /after 2 attempts: timed out after 200 ms/.test(err.message),
    );
    assert.equal(requests(), 2);
  });

  it('retries connection errors and says what failed', async (t) => {
    const { url } = await misbehaving(t, (_n, req) => req.socket.destroy());
    await assert.rejects(
      fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, retries: 1, ...fast }),
      (err: Error) => err instanceof ArtifactFetchError && /after 2 attempts/.test(err.message),
    );
  });

  it('stops a download over the byte cap, declared or not, without retrying', async (t) => {
    const declared = await misbehaving(t, (_n, _req, res) => {
      res.writeHead(200, { 'Content-Length': 10_000 });
      res.end(Buffer.alloc(10_000));
    });
    await assert.rejects(
      fetchArtifact({
        url: declared.url,
        digest: `sha256:${'a'.repeat(64)}`,
        limits: { maxDownloadBytes: 4096 },
        ...fast,
      }),
      (err: Error) => err instanceof ArtifactTooLargeError && /download limit of 4\.0 KiB/.test(err.message),
    );
    assert.equal(declared.requests(), 1);
    const chunked = await misbehaving(t, (_n, _req, res) => {
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
      res.end();
    });
    await assert.rejects(
      fetchArtifact({
        url: chunked.url,
        digest: `sha256:${'a'.repeat(64)}`,
        limits: { maxDownloadBytes: 4096 },
        ...fast,
      }),
      ArtifactTooLargeError,
    );
  });

  it('refuses unsupported or malformed digests before any request', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => res.end());
    await assert.rejects(
      fetchArtifact({ url, digest: `sha512:${'a'.repeat(128)}` }),
      /unsupported .* "sha512"/,
    );
    await assert.rejects(fetchArtifact({ url, digest: 'sha256:XYZ' }), UnsupportedDigestError);
    assert.equal(requests(), 0);
  });

  it('keeps credentials out of error messages', async (t) => {
    const { url } = await misbehaving(t, (_n, _req, res) => {
      res.statusCode = 404;
      res.end();
    });
    await assert.rejects(
      fetchArtifact({ url: `${url}?token=hunter2`, digest: `sha256:${'a'.repeat(64)}`, ...fast }),
      (err: Error) => err instanceof ArtifactNotFoundError && !err.message.includes('hunter2'),
    );
    await assert.rejects(
      fetchArtifact({
        url: url.replace('http://', 'http://user:hunter2@'),
        digest: `sha256:${'a'.repeat(64)}`,
      }),
      (err: Error) => /must not carry credentials/.test(err.message) && !err.message.includes('hunter2'),
    );
  });

  it('honours the caller signal and uses the injected fetch', async (t) => {
    const { url, requests } = await misbehaving(t, (_n, _req, res) => {
      res.statusCode = 500;
      res.end();
    });
    const controller = new AbortController();
    let calls = 0;
    const fetchImpl: typeof fetch = (input, init) => {
      calls++;
      if (calls === 2) controller.abort(new Error('reconcile cancelled'));
      return fetch(input, init);
    };
    await assert.rejects(
      fetchArtifact({
        url,
        digest: `sha256:${'a'.repeat(64)}`,
        fetchImpl,
        signal: controller.signal,
        ...fast,
      }),
      /reconcile cancelled/,
    );
    assert.equal(calls, 2);
    assert.ok(requests() <= 2);
  });
});
