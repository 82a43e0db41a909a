// The all-in-one process runs every operator in one Node process, so one operator's import-time
// side effects reach the others. undici (the notification operator's HTTP client) installs itself
// as the process-wide fetch dispatcher when it loads, unless one is set already; Node's global
// fetch, which the kustomize operator's artifact downloads use, then ran on undici 7.30.2, whose
// HTTP/1 client dies with an uncatchable `assert(!this.paused)` when a server closes the
// connection while the parser is paused under backpressure (nodejs/undici#5360, fixed by
// nodejs/undici#5474 in undici 8.6.0, which needs Node 22.19 or later).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { ArtifactFetchError, fetchArtifact } from '@mooring/artifact';
import { OPERATORS } from './registry.ts';

/** Where undici's lib/global.js keeps the process-wide dispatcher; Node's fetch reads the first. */
const SLOTS = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')];
const slots = () => SLOTS.map((s) => (globalThis as unknown as Record<symbol, unknown>)[s]);

const MiB = 1024 * 1024;
/** What the server promises (Content-Length), what it sends before cutting the connection. */
const PROMISED = 8 * MiB;
const SENT = 4 * MiB;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);
/**
 * Rounds of the cut-off download. Whether one round finds the client's parser paused at the cut
 * depends on scheduling, so one round alone rarely shows the crash; many do (with the global
 * dispatcher taken over, about one round in ten died here). Passing never depends on timing.
 */
const ROUNDS = 25;

describe('the all-in-one process', () => {
  // First in this file, so nothing here has used fetch or loaded undici before it.
  it('loading every operator leaves global fetch on Node’s own dispatcher', async () => {
    assert.deepEqual(slots(), [undefined, undefined], 'no dispatcher is set before the operators load');
    for (const load of Object.values(OPERATORS)) await load();
    // The copy of undici the notification operator loads, as it resolves it.
    const undici = createRequire(import.meta.resolve('@mooring/notification-operator'))('undici') as {
      Dispatcher: abstract new (...args: never[]) => unknown;
    };
    for (const [i, value] of slots().entries()) {
      assert.ok(
        !(value instanceof undici.Dispatcher),
        `${String(SLOTS[i])} holds the npm undici's dispatcher: global fetch would run on it`,
      );
    }
    // And Node's fetch still has a dispatcher of its own to run on.
    const res = await fetch('data:text/plain,ok');
    assert.equal(await res.text(), 'ok');
  });

  it('artifact server crash: a large body cut off under backpressure fails the fetch, not the process', async (t) => {
    for (const load of Object.values(OPERATORS)) await load();
    // An uncaught exception here would be the crash; the test runner catches it, this turns it
    // into this test's failure at once instead of an attempt that never settles.
    let crashed!: (err: unknown) => void;
    const crash = new Promise<never>((_, reject) => {
      crashed = reject;
    });
    crash.catch(() => {});
    process.on('uncaughtException', crashed);
    t.after(() => process.off('uncaughtException', crashed));

    const cut: number[] = [];
    const server = createServer((_req, res) => {
      // `Connection: close` makes the client finish the parse when the socket ends: the crash path.
      res.writeHead(200, {
        'content-type': 'application/gzip',
        'content-length': String(PROMISED),
        connection: 'close',
      });
      let sent = 0;
      const pump = (): void => {
        while (sent < SENT) {
          sent += CHUNK.length;
          // The server waits for the client to take what it sent: backpressure all the way.
          if (!res.write(CHUNK)) {
            res.once('drain', pump);
            return;
          }
        }
        cut.push(sent);
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
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gitrepository/apps/podinfo/a.tar.gz`;

    for (let round = 0; round < ROUNDS; round++) {
      await assert.rejects(
        Promise.race([fetchArtifact({ url, digest: `sha256:${'a'.repeat(64)}`, retries: 0 }), crash]),
        (err: Error) => {
          assert.ok(err instanceof ArtifactFetchError, `round ${round}: ${err.stack ?? err}`);
          assert.match(err.message, /failed after 1 attempts/);
          return true;
        },
      );
    }
    assert.deepEqual(cut, Array(ROUNDS).fill(SENT), 'every response was cut off after 4 MiB of 8 MiB');
  });
});
