// The chart repository client on loopback: redirects followed, credentials kept to the host first
// asked (127.0.0.1 and localhost are two hosts here) unless passCredentials, limits and statuses.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { HttpStatusError, httpGet, TooLargeError } from './http-get.ts';

let server: http.Server;
let port: number;
const seen: { path: string; auth?: string; host?: string }[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization, host: req.headers.host });
    if (req.url === '/same') return void res.writeHead(302, { Location: '/final' }).end();
    if (req.url === '/other')
      return void res.writeHead(307, { Location: `http://localhost:${port}/final` }).end();
    if (req.url === '/loop') return void res.writeHead(302, { Location: '/loop' }).end();
    if (req.url === '/file') return void res.writeHead(302, { Location: 'file:///etc/passwd' }).end();
    if (req.url === '/final') return void res.writeHead(200).end('chart');
    if (req.url === '/big') return void res.writeHead(200).end('x'.repeat(100));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise((r) => server.close(r)));

const options = (extra = {}) => ({
  auth: { basic: { username: 'u', password: 'p' } },
  maxBytes: 50,
  signal: AbortSignal.timeout(5_000),
  what: 'chart x',
  ...extra,
});
const BASIC = `Basic ${Buffer.from('u:p').toString('base64')}`;
const at = (path: string) => new URL(`http://127.0.0.1:${port}${path}`);

test('a redirect on the same host keeps the credentials; to another host only with passCredentials', async () => {
  seen.length = 0;
  assert.equal((await httpGet(at('/same'), options())).toString(), 'chart');
  assert.deepEqual(
    seen.map((s) => [s.path, s.auth]),
    [
      ['/same', BASIC],
      ['/final', BASIC],
    ],
  );
  seen.length = 0;
  assert.equal((await httpGet(at('/other'), options())).toString(), 'chart');
  assert.deepEqual(
    seen.map((s) => [s.path, s.auth]),
    [
      ['/other', BASIC],
      ['/final', undefined],
    ],
  );
  seen.length = 0;
  await httpGet(at('/other'), options({ passCredentials: true }));
  assert.deepEqual(
    seen.map((s) => s.auth),
    [BASIC, BASIC],
  );
});

test('endless or non-http redirects, statuses other than 200 and bodies over the limit are errors', async () => {
  await assert.rejects(httpGet(at('/loop'), options()), /more than 10 redirects/);
  await assert.rejects(httpGet(at('/file'), options()), /not http\(s\)/);
  await assert.rejects(
    httpGet(at('/missing'), options()),
    (err: unknown) =>
      err instanceof HttpStatusError &&
      err.status === 404 &&
      /GET http:\/\/127\.0\.0\.1:\d+\/missing for chart x: 404/.test(err.message),
  );
  await assert.rejects(httpGet(at('/big'), options()), (err: unknown) => err instanceof TooLargeError);
});
