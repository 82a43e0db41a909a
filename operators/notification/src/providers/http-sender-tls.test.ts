import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sendRequest } from './http-sender.ts';

let dir: string;
let ca: string;
let cert: string;
let key: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mooring-tls-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  // A private CA and a server certificate for 127.0.0.1, made by the real openssl.
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'tls.key',
    '-out',
    'tls.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1" > ext.cnf'], { cwd: dir });
  run(
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tls.crt',
    '-days',
    '1',
    '-extfile',
    'ext.cnf',
  );
  ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  cert = readFileSync(join(dir, 'tls.crt'), 'utf8');
  key = readFileSync(join(dir, 'tls.key'), 'utf8');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const req = (url: string) => ({
  method: 'POST' as const,
  url,
  headers: { 'content-type': 'application/json' },
  body: '{}',
});

test('an https provider is trusted through the CA from certSecretRef, and refused without it', async (t) => {
  let hits = 0;
  const server = createHttpsServer({ cert, key }, (_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  assert.equal(await sendRequest(req(url), { timeoutMs: 5_000, tls: { ca } }, { attempts: 1 }), 200);
  await assert.rejects(
    sendRequest(req(url), { timeoutMs: 5_000 }, { attempts: 1 }),
    /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/,
  );
  assert.equal(hits, 1);
});

test('a provider behind a proxy is reached through an HTTP CONNECT tunnel', async (t) => {
  const sink = createHttpServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const connects: string[] = [];
  const proxy = createHttpServer();
  proxy.on('connect', (r, socket, head) => {
    connects.push(r.url ?? '');
    const [host, port] = (r.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.after(async () => {
    proxy.closeAllConnections();
    sink.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    await new Promise<void>((r) => sink.close(() => r()));
  });
  const target = `127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  assert.equal(
    await sendRequest(req(`http://${target}/x`), { timeoutMs: 5_000, proxy: proxyUrl }, { attempts: 1 }),
    200,
  );
  assert.deepEqual(connects, [target]);
});
