/**
 * The ApiTransport of one simulated operator process: every request goes to the in-memory API
 * server (fake-api-server.ts) through a seeded fault plan. Time is the simulation's clock only, so
 * a slow answer is a timer on the fake clock and a run never waits for the wall clock.
 *
 * Faults, each decided per request from the fault PRNG:
 * - 500 InternalError without touching the store; 409 Conflict on writes without touching it;
 * - a write that is committed but whose answer is lost (the client sees a reset connection);
 * - latency: small (1–100 ms, to vary interleavings), slow (0.5–45 s), and past the client's
 *   `timeoutMs` a timeout; a timed-out request is committed before the client gives up, or never;
 * - watches: refused with 500 or 410 at connect, 410 as an ERROR event, a clean end or a reset in
 *   the middle, and a stall (the connection stays open and delivers nothing, as a half-open TCP
 *   connection does, until the informer's watchdog gives up on it);
 * - `kill()`: the process dies; requests in flight are committed or not, none is answered.
 *
 * No write lands after the client saw its request fail or time out: the fake does not model a
 * write that an API server commits after its client gave up on it (last-writer-wins status
 * writes carry no precondition, so such a reordering could regress a stored inventory).
 */
import { PassThrough, Readable } from 'node:stream';
import type {
  ApiTransport,
  TimerHandle,
  TransportRequest,
  TransportResponse,
  TransportStream,
} from '@mooring/runtime';
import { errorResponse, FakeApiServer, type ServerResponse } from './fake-api-server.ts';
import type { Rng } from './prng.ts';

/** Probabilities per request (or per watch); all 0 is a healthy network and server. */
export interface FaultRates {
  error: number;
  conflict: number;
  lost: number;
  slow: number;
  watchRefused: number;
  watchGone: number;
  watchDrop: number;
  watchStall: number;
}

export const NO_FAULTS: FaultRates = {
  error: 0,
  conflict: 0,
  lost: 0,
  slow: 0,
  watchRefused: 0,
  watchGone: 0,
  watchDrop: 0,
  watchStall: 0,
};

export interface SimClockLike {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TransportHooks {
  /** Before the server sees a request (after faults decided it reaches the server). */
  beforeHandle?(req: TransportRequest): void;
  /** One line per request, for the trace and its hash. */
  record?(line: string): void;
}

interface Pending {
  settle(commit: boolean): void;
}

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class SimTransport implements ApiTransport {
  readonly #server: FakeApiServer;
  readonly #clock: SimClockLike;
  readonly #rng: Rng;
  readonly #faults: () => FaultRates;
  readonly #hooks: TransportHooks;
  readonly #pending = new Set<Pending>();
  readonly #streams = new Set<{ kill(): void }>();
  readonly name: string;
  #dead = false;
  /** Requests that arrived after `kill`: a process that keeps working after it stopped. */
  afterDeath = 0;
  requests = 0;

  constructor(
    name: string,
    server: FakeApiServer,
    clock: SimClockLike,
    rng: Rng,
    faults: () => FaultRates,
    hooks: TransportHooks = {},
  ) {
    this.name = name;
    this.#server = server;
    this.#clock = clock;
    this.#rng = rng;
    this.#faults = faults;
    this.#hooks = hooks;
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** The process is gone: in-flight requests are committed (when `commit` says so) or lost. */
  kill(commit: () => boolean): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const p of [...this.#pending]) p.settle(commit());
    for (const s of [...this.#streams]) s.kill();
  }

  close(): void {}

  #handle(req: TransportRequest): ServerResponse {
    this.#hooks.beforeHandle?.(req);
    return this.#server.handle({ method: req.method, path: req.path, headers: req.headers, body: req.body });
  }

  send(req: TransportRequest): Promise<TransportResponse> {
    this.requests++;
    if (this.#dead) {
      this.afterDeath++;
      return Promise.reject(
        new Error(`${req.method} ${req.path}: connect ECONNREFUSED (process ${this.name} is gone)`),
      );
    }
    const f = this.#faults();
    const rng = this.#rng;
    const write = WRITE.has(req.method);
    const roll = rng.next();
    let outcome: 'ok' | 'error' | 'conflict' | 'lost' = 'ok';
    if (roll < f.error) outcome = 'error';
    else if (roll < f.error + (write ? f.conflict : 0)) outcome = 'conflict';
    else if (roll < f.error + (write ? f.conflict + f.lost : 0)) outcome = 'lost';
    let latency = 0;
    const lat = rng.next();
    if (lat < f.slow) latency = rng.int(500, 45_000);
    else if (lat < f.slow + 0.25) latency = rng.int(1, 100);
    const timeoutMs = req.timeoutMs ?? 30_000;
    const timesOut = latency >= timeoutMs;
    // A request that times out reaches the server before the client gives up, or never does.
    const commitOnTimeout = timesOut && rng.chance(0.5);
    const label = `${req.method} ${req.path}`;

    const answer = (): TransportResponse => {
      if (outcome === 'error')
        return errorResponse(500, 'InternalError', 'Internal error occurred: etcdserver: request timed out');
      if (outcome === 'conflict')
        return errorResponse(
          409,
          'Conflict',
          'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again',
        );
      return this.#handle(req);
    };

    if (latency === 0 && outcome !== 'lost') {
      const res = answer();
      this.#hooks.record?.(`${label} ${res.statusCode}`);
      return Promise.resolve(res);
    }

    return new Promise<TransportResponse>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      let committed = false;
      let result: TransportResponse | undefined;
      const commit = () => {
        if (committed) return;
        committed = true;
        result = answer();
      };
      const entry: Pending = {
        settle: (doCommit) => {
          finish();
          if (doCommit) commit();
          this.#hooks.record?.(`${label} killed${committed ? ` after ${result?.statusCode}` : ''}`);
          reject(new Error(`${label}: socket hang up (process ${this.name} killed)`));
        },
      };
      const onAbort = () => {
        finish();
        this.#hooks.record?.(`${label} aborted`);
        reject(Object.assign(new Error(`${label}: the operation was aborted`), { name: 'AbortError' }));
      };
      const finish = () => {
        if (timer) this.#clock.clearTimeout(timer);
        this.#pending.delete(entry);
        req.signal?.removeEventListener('abort', onAbort);
      };
      if (req.signal?.aborted) return onAbort();
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.add(entry);
      if (timesOut) {
        const at = commitOnTimeout ? rng.int(0, timeoutMs - 1) : timeoutMs;
        timer = this.#clock.setTimeout(() => {
          if (commitOnTimeout) commit();
          timer = this.#clock.setTimeout(
            () => {
              finish();
              this.#hooks.record?.(`${label} timeout${committed ? ` after ${result?.statusCode}` : ''}`);
              reject(new Error(`${label}: no response within ${timeoutMs} ms`));
            },
            timeoutMs - (commitOnTimeout ? at : timeoutMs),
          );
        }, at);
        return;
      }
      timer = this.#clock.setTimeout(() => {
        finish();
        commit();
        if (outcome === 'lost') {
          this.#hooks.record?.(`${label} lost after ${result?.statusCode}`);
          reject(new Error(`${label}: read ECONNRESET`));
        } else {
          this.#hooks.record?.(`${label} ${result!.statusCode}`);
          resolve(result!);
        }
      }, latency);
    });
  }

  async openStream(req: TransportRequest): Promise<TransportStream> {
    this.requests++;
    const label = `WATCH ${req.path}`;
    if (this.#dead) {
      this.afterDeath++;
      throw new Error(`${label}: connect ECONNREFUSED (process ${this.name} is gone)`);
    }
    if (!FakeApiServer.isWatch(req.path)) throw new Error(`${label}: only watches are streamed by the fake`);
    const f = this.#faults();
    const rng = this.#rng;
    const roll = rng.next();
    const errorBody = (res: ServerResponse): TransportStream => {
      this.#hooks.record?.(`${label} ${res.statusCode}`);
      return { statusCode: res.statusCode, body: Readable.from([Buffer.from(res.body)]) };
    };
    if (roll < f.watchRefused)
      return errorBody(errorResponse(500, 'InternalError', 'Internal error occurred: watch refused'));
    const goneAtConnect = roll < f.watchRefused + f.watchGone;
    const timeoutSeconds = Number(new URL(req.path, 'http://x').searchParams.get('timeoutSeconds') ?? '1800');
    const lifetime = timeoutSeconds * 1000;
    const drop = rng.next();
    const dropAt = rng.int(0, lifetime);
    const dropKind = rng.pick(['end', 'reset', 'gone-event'] as const);
    const stalls = drop < f.watchStall;
    const drops = !stalls && drop < f.watchStall + f.watchDrop;

    const body = new PassThrough();
    let open = true;
    let stalled = false;
    const timers: TimerHandle[] = [];
    const write = (type: string, object: unknown) => {
      if (open && !stalled) body.write(`${JSON.stringify({ type, object })}\n`);
    };
    const sendGone = () =>
      write('ERROR', {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'too old resource version',
      });
    if (goneAtConnect) {
      if (rng.chance(0.5)) return errorBody(errorResponse(410, 'Expired', 'too old resource version'));
      sendGone();
      body.end();
      this.#hooks.record?.(`${label} 200 gone-event`);
      return { statusCode: 200, body };
    }
    const opened = this.#server.watch(req.path, write);
    if ('error' in opened) return errorBody(opened.error);
    this.#hooks.record?.(`${label} 200`);
    const close = (how: 'end' | 'reset' | 'abort') => {
      if (!open) return;
      open = false;
      opened.cancel();
      for (const t of timers) this.#clock.clearTimeout(t);
      this.#streams.delete(stream);
      req.signal?.removeEventListener('abort', onAbort);
      if (how === 'end') body.end();
      else body.destroy(new Error(how === 'abort' ? 'The operation was aborted' : 'watch: read ECONNRESET'));
    };
    const stream = { kill: () => close('reset') };
    const onAbort = () => close('abort');
    this.#streams.add(stream);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) close('abort');
    timers.push(this.#clock.setTimeout(() => close('end'), lifetime));
    if (stalls) {
      timers.push(
        this.#clock.setTimeout(() => {
          stalled = true;
          for (const t of timers.splice(0)) this.#clock.clearTimeout(t);
          this.#hooks.record?.(`${label} stalled`);
        }, dropAt),
      );
    } else if (drops) {
      timers.push(
        this.#clock.setTimeout(() => {
          this.#hooks.record?.(`${label} dropped ${dropKind}`);
          if (dropKind === 'gone-event') {
            sendGone();
            close('end');
          } else close(dropKind);
        }, dropAt),
      );
    }
    return { statusCode: 200, body };
  }
}
