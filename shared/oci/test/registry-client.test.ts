import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
// The registry harness file alone: the harness index also loads the Kubernetes client (~5 s).
import { TestRegistry } from '@mooring/test/harness/registry';
import {
  ContentTooLargeError,
  DigestMismatchError,
  MediaTypes,
  type OciReference,
  parseOciUrl,
  RegistryAuthError,
  RegistryClient,
  type RegistryClientOptions,
  RegistryNotFoundError,
  RegistryProtocolError,
  RegistryUnavailableError,
} from '../src/index.ts';

const USER = 'mooring';
const PASSWORD = 'hunter2-SECRET-pw-7f3a';
const IDENTITY_TOKEN = 'refresh-SECRET-tok-91b2';

function client(extra: Partial<RegistryClientOptions> = {}): RegistryClient {
  return new RegistryClient({ insecure: true, timeoutMs: 10_000, ...extra });
}

function artifact(content: string, revision: string) {
  return {
    config: { mediaType: MediaTypes.fluxConfig, data: Buffer.from('{}') },
    layers: [
      {
        mediaType: MediaTypes.fluxContent,
        data: Buffer.from(content),
        annotations: { 'org.opencontainers.image.title': 'content.tgz' },
      },
    ],
    annotations: { 'org.opencontainers.image.revision': revision, 'org.opencontainers.image.source': 'test' },
  };
}

/** A node:http test double of the network on a loopback port. */
async function serve(handler: http.RequestListener): Promise<{ host: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Forwards to the registry; blob and manifest bodies come back with one byte flipped. */
function tamperingProxy(
  target: string,
  tamper: (path: string) => boolean,
): Promise<{ host: string; close(): Promise<void> }> {
  return serve((req, res) => {
    const upstream = http.request(
      `http://${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: target } },
      async (up) => {
        const chunks: Buffer[] = [];
        for await (const c of up) chunks.push(c as Buffer);
        const body = Buffer.concat(chunks);
        if (tamper(req.url ?? '') && body.length > 0)
          body[body.length - 1] = (body[body.length - 1] ?? 0) ^ 0x01;
        res.writeHead(up.statusCode ?? 502, up.headers).end(body);
      },
    );
    req.pipe(upstream);
  });
}

let registry: TestRegistry;
let basicRegistry: TestRegistry;
let tokenRegistry: TestRegistry;
let tlsRegistry: TestRegistry;
let scratch: string;

before(
  async () => {
    [registry, basicRegistry, tokenRegistry, tlsRegistry] = await Promise.all([
      TestRegistry.start(),
      TestRegistry.start({ htpasswd: { username: USER, password: PASSWORD } }),
      TestRegistry.start({
        htpasswd: { username: USER, password: PASSWORD },
        token: true,
        identityToken: IDENTITY_TOKEN,
      }),
      TestRegistry.start({ tls: true }),
    ]);
    scratch = mkdtempSync(join(tmpdir(), 'mooring-oci-test-'));
  },
  { timeout: 60_000 },
);

after(async () => {
  await Promise.all([
    registry?.close(),
    basicRegistry?.close(),
    tokenRegistry?.close(),
    tlsRegistry?.close(),
  ]);
  rmSync(scratch, { recursive: true, force: true });
});

describe('push and pull against docker-registry', { timeout: 60_000 }, () => {
  test('push then resolve returns the same digest, media types and annotations, and the layer downloads intact', async () => {
    const ref = parseOciUrl(registry.url('flux/app'));
    const oci = client();
    const { digest } = await oci.push(ref, 'v1.0.0', artifact('layer bytes v1', 'main@sha1:abc'));
    assert.match(digest, /^sha256:[a-f0-9]{64}$/);

    const byTag = await oci.resolveManifest(ref, 'v1.0.0');
    assert.equal(byTag.digest, digest);
    assert.equal(byTag.mediaType, MediaTypes.ociManifest);
    assert.equal(byTag.manifest.config.mediaType, MediaTypes.fluxConfig);
    assert.equal(byTag.manifest.layers[0]?.mediaType, MediaTypes.fluxContent);
    assert.equal(byTag.manifest.layers[0]?.annotations?.['org.opencontainers.image.title'], 'content.tgz');
    assert.deepEqual(byTag.annotations, {
      'org.opencontainers.image.revision': 'main@sha1:abc',
      'org.opencontainers.image.source': 'test',
    });

    const byDigest = await oci.resolveManifest(ref, digest);
    assert.equal(byDigest.digest, digest);
    assert.equal(await oci.headDigest(ref, 'v1.0.0'), digest);

    const layer = byTag.manifest.layers[0]!;
    const file = join(scratch, 'layer.tgz');
    await oci.fetchBlob(ref, layer, file);
    assert.equal(readFileSync(file, 'utf8'), 'layer bytes v1');
  });

  test('a moved tag resolves to the new digest; a missing tag is RegistryNotFoundError', async () => {
    const ref = parseOciUrl(registry.url('flux/moving'));
    const oci = client();
    const first = await oci.push(ref, 'latest', artifact('one', 'r1'));
    const second = await oci.push(ref, 'latest', artifact('two', 'r2'));
    assert.notEqual(first.digest, second.digest);
    assert.equal(await oci.headDigest(ref, 'latest'), second.digest);
    await assert.rejects(oci.resolveManifest(ref, 'nope'), RegistryNotFoundError);
    await assert.rejects(oci.headDigest(ref, 'nope'), RegistryNotFoundError);
    await assert.rejects(
      oci.resolveManifest(ref, `sha256:${'0'.repeat(64)}`),
      (err: Error) => err instanceof RegistryNotFoundError && err.message.includes(registry.host),
    );
  });

  test('lists every pushed tag', async () => {
    const ref = parseOciUrl(registry.url('flux/tags'));
    const oci = client();
    for (const tag of ['1.0.0', '1.1.0', 'v2.0.0', 'latest']) await oci.push(ref, tag, artifact(tag, tag));
    assert.deepEqual((await oci.listTags(ref)).sort(), ['1.0.0', '1.1.0', 'latest', 'v2.0.0']);
    await assert.rejects(oci.listTags(ref, { maxTags: 3 }), ContentTooLargeError);
    await assert.rejects(oci.listTags(parseOciUrl(registry.url('flux/never-pushed'))), RegistryNotFoundError);
  });

  test('an image index: resolveManifest refuses it clearly, headDigest returns its digest', async () => {
    const ref = parseOciUrl(registry.url('flux/multi'));
    const oci = client();
    const { digest } = await oci.push(ref, 'single', artifact('x', 'r'));
    const size = (
      await fetch(`http://${registry.host}/v2/flux/multi/manifests/single`, {
        headers: { Accept: MediaTypes.ociManifest },
      }).then((r) => r.arrayBuffer())
    ).byteLength;
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaTypes.ociIndex,
      manifests: [
        { mediaType: MediaTypes.ociManifest, digest, size, platform: { os: 'linux', architecture: 'amd64' } },
      ],
    });
    const put = await fetch(`http://${registry.host}/v2/flux/multi/manifests/multi`, {
      method: 'PUT',
      headers: { 'Content-Type': MediaTypes.ociIndex },
      body: index,
    });
    assert.equal(put.status, 201);
    await assert.rejects(oci.resolveManifest(ref, 'multi'), (err: Error) => {
      assert.ok(err instanceof RegistryProtocolError);
      assert.match(err.message, /image index/);
      return true;
    });
    assert.equal(
      await oci.headDigest(ref, 'multi'),
      `sha256:${createHash('sha256').update(index).digest('hex')}`,
    );
  });
});

describe('tag list pagination', () => {
  test('follows Link rel="next" with ?n=2 until the last page', async () => {
    // docker-registry 2.8.2 ignores ?n= on tags/list (pagination came in distribution v3), so a double pages.
    const all = ['a', 'b', 'c', 'd', 'e'];
    const seen: string[] = [];
    const server = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      seen.push(url.search);
      const n = Number(url.searchParams.get('n'));
      const last = url.searchParams.get('last');
      const start = last ? all.indexOf(last) + 1 : 0;
      const page = all.slice(start, start + n);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (start + n < all.length) headers.Link = `</v2/p/tags/list?n=${n}&last=${page.at(-1)}>; rel="next"`;
      res.writeHead(200, headers).end(JSON.stringify({ name: 'p', tags: page }));
    });
    try {
      const tags = await client().listTags({ host: server.host, repository: 'p' }, { pageSize: 2 });
      assert.deepEqual(tags, all);
      assert.deepEqual(seen, ['?n=2', '?n=2&last=b', '?n=2&last=d']);
    } finally {
      await server.close();
    }
  });

  test('refuses a Link to another host and a Link loop', async () => {
    const server = await serve((req, res) => {
      const loop = req.url?.includes('/loop/');
      res
        .writeHead(200, {
          Link: loop ? '</v2/loop/tags/list?n=1000>; rel="next"' : '<http://evil.invalid/x>; rel="next"',
        })
        .end(JSON.stringify({ tags: ['a'] }));
    });
    try {
      await assert.rejects(client().listTags({ host: server.host, repository: 'p' }), /another host/);
      await assert.rejects(client().listTags({ host: server.host, repository: 'loop' }), /already sent/);
    } finally {
      await server.close();
    }
  });
});

describe('htpasswd basic auth', () => {
  test('good credentials push, list and pull', async () => {
    const ref = parseOciUrl(basicRegistry.url('private/app'));
    const oci = client({ credentials: { username: USER, password: PASSWORD } });
    const { digest } = await oci.push(ref, 'v1', artifact('private', 'r'));
    assert.deepEqual(await oci.listTags(ref), ['v1']);
    assert.equal((await oci.resolveManifest(ref, 'v1')).digest, digest);
  });

  test('a wrong password is RegistryAuthError naming the host, without the password', async () => {
    const wrong = `${PASSWORD}-wrong`;
    const oci = client({ credentials: { username: USER, password: wrong } });
    await assert.rejects(oci.listTags(parseOciUrl(basicRegistry.url('private/app'))), (err: Error) => {
      assert.ok(err instanceof RegistryAuthError, err.message);
      assert.ok(err.message.includes(basicRegistry.host), err.message);
      assert.ok(!err.message.includes(wrong) && !err.message.includes(PASSWORD), err.message);
      assert.ok(!err.message.includes(Buffer.from(`${USER}:${wrong}`).toString('base64')));
      return true;
    });
  });

  test('anonymous pull from a protected registry is RegistryAuthError', async () => {
    await assert.rejects(
      client().resolveManifest(parseOciUrl(basicRegistry.url('private/app')), 'v1'),
      (err: Error) => {
        assert.ok(err instanceof RegistryAuthError);
        assert.match(err.message, /requires authentication/);
        return true;
      },
    );
  });
});

describe('bearer token auth (docker-registry auth.token + a real token server)', () => {
  test('good credentials: token fetched once per scope and reused', async () => {
    const ref = parseOciUrl(tokenRegistry.url('tok/app'));
    const oci = client({ credentials: { username: USER, password: PASSWORD } });
    const { digest } = await oci.push(ref, 'v1', artifact('tok', 'r'));
    const issuedAfterPush = tokenRegistry.tokenServer!.issued;
    assert.ok(issuedAfterPush >= 1);
    assert.equal((await oci.resolveManifest(ref, 'v1')).digest, digest);
    const issuedAfterFirstPull = tokenRegistry.tokenServer!.issued;
    await oci.resolveManifest(ref, 'v1');
    await oci.listTags(ref);
    await oci.fetchBlob(
      ref,
      (await oci.resolveManifest(ref, 'v1')).manifest.layers[0]!,
      join(scratch, 'tok.tgz'),
    );
    assert.equal(tokenRegistry.tokenServer!.issued, issuedAfterFirstPull, 'pull token reused from cache');
    assert.equal(readFileSync(join(scratch, 'tok.tgz'), 'utf8'), 'tok');
  });

  test('a token is fetched again once its expires_in has passed', async () => {
    const ref = parseOciUrl(tokenRegistry.url('tok/expiry'));
    const server = tokenRegistry.tokenServer!;
    const oci = client({ credentials: { username: USER, password: PASSWORD } });
    server.expiresInSeconds = 1;
    try {
      await oci.push(ref, 'v1', artifact('exp', 'r'));
      await oci.headDigest(ref, 'v1');
      const issued = server.issued;
      // Reuse within the lifetime is asserted above with a long lifetime; here only renewal.
      await new Promise((r) => setTimeout(r, 1000));
      await oci.headDigest(ref, 'v1');
      assert.equal(server.issued, issued + 1, 'renewed after expiry');
    } finally {
      server.expiresInSeconds = 300;
    }
  });

  test('an identity token is exchanged as an OAuth2 refresh_token', async () => {
    const ref = parseOciUrl(tokenRegistry.url('tok/idt'));
    const oci = client({ credentials: { identityToken: IDENTITY_TOKEN } });
    const { digest } = await oci.push(ref, 'v1', artifact('idt', 'r'));
    assert.equal(await oci.headDigest(ref, 'v1'), digest);
  });

  test('a wrong password is RegistryAuthError naming the host, without the password', async () => {
    const wrong = `${PASSWORD}-nope`;
    const refusedBefore = tokenRegistry.tokenServer!.refused;
    const oci = client({ credentials: { username: USER, password: wrong } });
    await assert.rejects(oci.listTags(parseOciUrl(tokenRegistry.url('tok/app'))), (err: Error) => {
      assert.ok(err instanceof RegistryAuthError, err.message);
      assert.ok(err.message.includes(tokenRegistry.host), err.message);
      assert.ok(!err.message.includes(wrong), err.message);
      return true;
    });
    assert.equal(tokenRegistry.tokenServer!.refused, refusedBefore + 1);
    const badIdentity = client({ credentials: { identityToken: 'not-the-SECRET-token' } });
    await assert.rejects(badIdentity.listTags(parseOciUrl(tokenRegistry.url('tok/app'))), (err: Error) => {
      assert.ok(err instanceof RegistryAuthError && !err.message.includes('not-the-SECRET-token'));
      return true;
    });
  });

  test('anonymous pull is RegistryAuthError', async () => {
    await assert.rejects(
      client().resolveManifest(parseOciUrl(tokenRegistry.url('tok/app')), 'v1'),
      RegistryAuthError,
    );
  });
});

describe('integrity and limits', () => {
  test('a tampered blob is DigestMismatchError and leaves no file behind', async () => {
    const ref = parseOciUrl(registry.url('flux/tamper'));
    const { digest } = await client().push(ref, 'v1', artifact('precious content', 'r'));
    const layer = (await client().resolveManifest(ref, digest)).manifest.layers[0]!;
    const proxy = await tamperingProxy(registry.host, (path) => path.includes('/blobs/'));
    const dir = mkdtempSync(join(scratch, 'tamper-'));
    try {
      const viaProxy = { host: proxy.host, repository: ref.repository };
      await assert.rejects(client().fetchBlob(viaProxy, layer, join(dir, 'out.tgz')), DigestMismatchError);
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      await proxy.close();
    }
  });

  test('a tampered manifest is DigestMismatchError', async () => {
    const ref = parseOciUrl(registry.url('flux/tamper-manifest'));
    const { digest } = await client().push(ref, 'v1', artifact('m', 'r'));
    const proxy = await tamperingProxy(registry.host, (path) => path.includes('/manifests/'));
    try {
      const viaProxy = { host: proxy.host, repository: ref.repository };
      await assert.rejects(client().resolveManifest(viaProxy, 'v1'), DigestMismatchError);
      await assert.rejects(client().resolveManifest(viaProxy, digest), DigestMismatchError);
    } finally {
      await proxy.close();
    }
  });

  test('a blob over maxBytes or of the wrong declared size is refused', async () => {
    const ref = parseOciUrl(registry.url('flux/big'));
    const { digest } = await client().push(ref, 'v1', artifact('0123456789', 'r'));
    const layer = (await client().resolveManifest(ref, digest)).manifest.layers[0]!;
    const dir = mkdtempSync(join(scratch, 'big-'));
    await assert.rejects(
      client().fetchBlob(ref, layer, join(dir, 'x'), { maxBytes: 5 }),
      ContentTooLargeError,
    );
    await assert.rejects(client().fetchBlob(ref, { ...layer, size: 4 }, join(dir, 'x')), DigestMismatchError);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('a local write failure is reported as such, not as a registry problem', async () => {
    const ref = parseOciUrl(registry.url('flux/big'));
    const layer = (await client().resolveManifest(ref, 'v1')).manifest.layers[0]!;
    await assert.rejects(client().fetchBlob(ref, layer, join(scratch, 'no-such-dir', 'x')), (err: Error) => {
      assert.ok(!(err instanceof RegistryUnavailableError), String(err));
      assert.match(err.message, /^writing blob sha256:[a-f0-9]+ of .* failed \(ENOENT\)\.$/);
      return true;
    });
  });

  test('garbage, incomplete or oversized manifests are RegistryProtocolError / ContentTooLargeError', async () => {
    const bodies: Record<string, string> = {
      garbage: '{"schemaVersion": 2, "mediaType": ',
      incomplete: JSON.stringify({ schemaVersion: 2, mediaType: MediaTypes.ociManifest, layers: [] }),
      badlayer: JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaTypes.ociManifest,
        config: { mediaType: 'x', digest: `sha256:${'a'.repeat(64)}`, size: 2 },
        layers: [{ mediaType: 'y', digest: 'md5:abc', size: -1 }],
      }),
      schema1: JSON.stringify({ schemaVersion: 1, name: 'x' }),
    };
    const server = await serve((req, res) => {
      const name = req.url?.split('/')[2] ?? '';
      if (name === 'huge') {
        res.writeHead(200, {
          'Content-Type': MediaTypes.ociManifest,
          'Content-Length': String(5 * 1024 * 1024),
        });
        res.end(Buffer.alloc(5 * 1024 * 1024, 0x20));
        return;
      }
      res.writeHead(200, { 'Content-Type': MediaTypes.ociManifest }).end(bodies[name] ?? 'x');
    });
    try {
      const at = (repository: string): OciReference => ({ host: server.host, repository });
      await assert.rejects(client().resolveManifest(at('garbage'), 'v1'), /not valid JSON/);
      await assert.rejects(client().resolveManifest(at('garbage'), 'v1'), RegistryProtocolError);
      await assert.rejects(client().resolveManifest(at('incomplete'), 'v1'), /config is missing/);
      await assert.rejects(
        client().resolveManifest(at('badlayer'), 'v1'),
        /layer 0 has a missing or unsupported digest/,
      );
      await assert.rejects(client().resolveManifest(at('schema1'), 'v1'), /schemaVersion 1/);
      await assert.rejects(client().resolveManifest(at('huge'), 'v1'), ContentTooLargeError);
      await assert.rejects(client().listTags(at('garbage')), RegistryProtocolError);
    } finally {
      await server.close();
    }
  });
});

describe('HTTPS', () => {
  test('a registry with a private CA works once caCert is given, and says what to do before', async () => {
    const ref = parseOciUrl(tlsRegistry.url('secure/app'));
    await assert.rejects(client({ insecure: false }).listTags(ref), (err: Error) => {
      assert.ok(err instanceof RegistryUnavailableError, String(err));
      assert.match(
        err.message,
        /TLS certificate of registry 127\.0\.0\.1:\d+ is not trusted .*certSecretRef/,
      );
      return true;
    });
    const oci = client({ insecure: false, caCert: tlsRegistry.caCert! });
    const { digest } = await oci.push(ref, 'v1', artifact('over tls', 'r'));
    assert.equal((await oci.resolveManifest(ref, 'v1')).digest, digest);
  });
});

describe('transport failures', () => {
  test('an unreachable host is RegistryUnavailableError', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await assert.rejects(client().listTags({ host: `127.0.0.1:${port}`, repository: 'x' }), (err: Error) => {
      assert.ok(err instanceof RegistryUnavailableError);
      assert.match(err.message, /refused the connection/);
      return true;
    });
  });

  test('a registry that never answers times out as RegistryUnavailableError', async () => {
    let requests = 0;
    const server = await serve(() => {
      requests++; // and never respond
    });
    try {
      // The message says the 300 ms deadline ended it, the count that it was one request: no clock needed.
      await assert.rejects(
        client({ timeoutMs: 300 }).listTags({ host: server.host, repository: 'x' }),
        (err: Error) => {
          assert.ok(err instanceof RegistryUnavailableError, String(err));
          assert.match(err.message, /timed out after 300 ms/);
          return true;
        },
      );
      assert.equal(requests, 1);
    } finally {
      await server.close();
    }
  });

  test('HTTPS against a plain-HTTP registry says to set insecure', async () => {
    await assert.rejects(
      client({ insecure: false }).listTags(parseOciUrl(registry.url('flux/tags'))),
      (err: Error) => {
        assert.ok(err instanceof RegistryUnavailableError, String(err));
        assert.match(err.message, /TLS handshake with registry 127\.0\.0\.1:\d+ failed.*insecure: true/);
        return true;
      },
    );
  });
});
