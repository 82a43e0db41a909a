// The notification operator's own requests still run on undici 7.30.2 (the release with the fix
// for nodejs/undici#5360, 8.6.0, needs Node 22.19), whose HTTP/1 client dies with an uncatchable
// `assert(!this.paused)` when a server closes the connection while a paused body is unread.
// sendRequest drains the provider's answer at once, so its parser is never left paused.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { SendError, sendRequest } from './http-sender.ts';

const CHUNK = Buffer.alloc(64 * 1024, 0x61);

test('a provider that cuts a large answer off mid-body fails or completes the send, not the process', async (t) => {
  let crashed!: (err: unknown) => void;
  const crash = new Promise<never>((_, reject) => {
    crashed = reject;
  });
  crash.catch(() => {});
  process.on('uncaughtException', crashed);
  t.after(() => process.off('uncaughtException', crashed));

  const server = createServer((req, res) => {
    req.resume();
    // Length-framed and EOF-framed answers in turn, each cut off after 4 MiB.
    const framed = req.url === '/framed';
    res.writeHead(
      200,
      framed ? { 'content-length': String(8 << 20), connection: 'close' } : { connection: 'close' },
    );
    let sent = 0;
    const pump = (): void => {
      while (sent < 4 << 20) {
        sent += CHUNK.length;
        if (!res.write(CHUNK)) {
          res.once('drain', pump);
          return;
        }
      }
      res.socket?.destroy();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  for (let round = 0; round < 20; round++) {
    const url = `${base}/${round % 2 ? 'framed' : 'eof'}`;
    const outcome = await Promise.race([
      sendRequest(
        { url, method: 'POST', headers: {}, body: '{}' },
        { timeoutMs: 60_000 },
        { attempts: 1 },
      ).then(
        (status) => status,
        (err: unknown) => err,
      ),
      crash,
    ]);
    // The provider said 200 before cutting its answer off: either outcome is a settled send.
    assert.ok(outcome === 200 || outcome instanceof SendError, `round ${round}: ${String(outcome)}`);
  }
});
