import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** One request a sink received. */
export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A loopback HTTP server standing in for Slack, GitHub, ...: it records every request. */
export interface Sink {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: Recorded[];
  /** Resolves when `count` requests have arrived, or rejects after `timeoutMs`. */
  received(count: number, timeoutMs?: number): Promise<Recorded[]>;
}

/** Starts a sink closed when the test ends; `status` picks each answer (200 by default). */
export async function startSink(
  t: TestContext,
  status: (n: number, r: Recorded) => number = () => 200,
): Promise<Sink> {
  const requests: Recorded[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(r);
      res.writeHead(status(requests.length, r), { 'content-type': 'application/json' });
      res.end('{}');
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    async received(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the sink got ${requests.length} requests, expected ${count}`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(timer);
            r();
          });
        });
      }
      return requests;
    },
  };
}
