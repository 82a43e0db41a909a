// One warm renderer: a worker thread holding an initialised instance of bin/mooring-helm.wasm
// (wasi-worker.mjs), its own scratch directory (the guest's stderr; the guest itself opens no
// directory, its charts come in the requests) and the shared buffer through which the guest's
// `lookup` waits for the host's answer.
// It renders one chart at a time; after a timeout, a trap or a panic it is dead and never reused.
// The guest keeps the charts it loaded (hack/tools/helm-renderer/chart_cache.go), so a chart it
// has seen is named by digest instead of sent; which ones it keeps is decided here, within
// `chartCacheBytes` of chart files, oldest out first.
import { mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { type ChartFiles, encodeRequest } from './chart-files.ts';
import { HelmRenderError } from './errors.ts';
import type { WasmModule } from './wasm-api.ts';

const WORKER = new URL('./wasi-worker.mjs', import.meta.url);

/**
 * Node 20's V8 (11.3) can crash the whole process (SIGSEGV in a garbage collection's stack walk,
 * nothing printed) when a guest that calls WASI through V8's fast API path grows its memory and the
 * growth starts a full collection: a reused renderer running a long template did so within seconds
 * in most runs (shared/helm/test/renderer-crash.test.ts). With fast API calls off, WASI calls take
 * V8's ordinary API path and the crash was not seen again. The flag is process-wide and read when a
 * wasm instance's imports are compiled, so it is set before the first renderer starts; a process
 * that renders no chart keeps the default.
 */
let fastApiCallsOff = false;
function turnOffFastApiCalls(): void {
  if (fastApiCallsOff) return;
  setFlagsFromString('--no-turbo-fast-api-calls');
  fastApiCallsOff = true;
}

/** The largest `lookup` answer (the JSON of one object or list) the host hands the guest. */
export const LOOKUP_ANSWER_LIMIT = 8 << 20;

/** Answers Helm's `lookup`: the object, the List object when `name` is empty, or null (not found). */
export type LookupFunction = (
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
) => Promise<Record<string, unknown> | null>;

/** How one call ended. `helm-error` carries Helm's message; `panic` and `trap` kill the worker. */
export type Outcome =
  | { kind: 'ok'; output: string; memoryBytes: number }
  | { kind: 'helm-error'; message: string; memoryBytes: number }
  | { kind: 'panic'; message: string }
  | { kind: 'trap'; message: string; stderr: string }
  | { kind: 'timeout' };

type FromWorker =
  | { type: 'ready' }
  | { type: 'result'; status: number; output: ArrayBuffer; memoryBytes: number }
  | { type: 'trap'; message: string }
  | { type: 'lookup'; query: string };

/** A call's end: an Outcome, or the guest's "that chart is not cached here". */
type CallOutcome = Outcome | { kind: 'not-cached' };

interface Job {
  done: (o: CallOutcome) => void;
  lookup: LookupFunction | undefined;
  timer: NodeJS.Timeout;
}

export class RendererWorker {
  private readonly scratch: string;
  private readonly stderrPath: string;
  private readonly worker: Worker;
  private readonly control: Int32Array;
  private readonly answer: Uint8Array;
  private readonly ready: Promise<void>;
  private job: Job | undefined;
  private dead = false;
  /** The guest's cached charts as this side decided them: digest → bytes, oldest first. */
  private readonly charts = new Map<string, number>();
  private chartBytes = 0;
  private readonly chartCacheBytes: number;

  /**
   * Starts the worker. Its guest opens no directory; `preopen`, for a one-off run that loads a
   * chart from a path, is what it sees as /chart. `chartCacheBytes` (default 0: none) bounds the
   * chart files its guest keeps loaded between renders.
   */
  constructor(module: WasmModule, options: { preopen?: string; chartCacheBytes?: number } = {}) {
    const { preopen } = options;
    turnOffFastApiCalls();
    this.chartCacheBytes = options.chartCacheBytes ?? 0;
    this.scratch = mkdtempSync(join(tmpdir(), 'mooring-helm-'));
    this.stderrPath = join(this.scratch, 'stderr');
    const buffer = new SharedArrayBuffer(8 + LOOKUP_ANSWER_LIMIT);
    this.control = new Int32Array(buffer, 0, 2);
    this.answer = new Uint8Array(buffer, 8);
    // The guest's memory is the capped wasm memory, not the JS heap: the worker needs little.
    // Its own stdio is the process's (captured stdio would keep the process alive while an
    // idle worker waits); it prints nothing but WASI's experimental warning, silenced here.
    this.worker = new Worker(WORKER, {
      workerData: { module, preopen, stderrPath: this.stderrPath, lookupBuffer: buffer },
      env: {},
      execArgv: ['--no-warnings'],
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    this.ready = new Promise((resolve, reject) => {
      const early = (err: Error): void =>
        reject(new HelmRenderError(`the Helm renderer did not start: ${err.message}`));
      this.worker.once('error', early);
      this.worker.once('exit', () => early(new Error('its worker stopped')));
      this.worker.once('message', (m: FromWorker) => {
        this.worker.off('error', early);
        if (m.type === 'ready') resolve();
        else early(new Error(m.type === 'trap' ? m.message : `unexpected ${m.type}`));
      });
    });
    this.ready.catch(() => this.discard());
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (err) =>
      this.finish({ kind: 'trap', message: `${err.name}: ${err.message}`, stderr: this.stderr() }),
    );
    this.worker.on('exit', () => {
      this.dead = true;
      this.finish({ kind: 'trap', message: 'the renderer worker stopped', stderr: this.stderr() });
      rmSync(this.scratch, { recursive: true, force: true });
    });
  }

  /** Resolves once the Go runtime and Helm are initialised; rejects with a HelmRenderError. */
  started(): Promise<void> {
    return this.ready;
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Alive and not rendering. */
  get idle(): boolean {
    return !this.dead && !this.job;
  }

  /** Lets the process exit while this worker waits for work (idle), or keeps it alive (busy). */
  hold(busy: boolean): void {
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  /**
   * Renders `request` (the JSON main.go reads, without the chart) with `chart`, or, without one,
   * the chart at `request.chart` in the preopened directory. The worker is stopped at `timeoutMs`.
   */
  async render(
    request: Record<string, unknown>,
    chart: ChartFiles | undefined,
    timeoutMs: number,
    lookup: LookupFunction | undefined,
  ): Promise<Outcome> {
    if (this.dead || this.job) throw new Error('RendererWorker: not idle');
    const deadline = performance.now() + timeoutMs;
    if (!chart)
      return this.settle(await this.call(encodeRequest(JSON.stringify(request)), timeoutMs, lookup));
    if (this.charts.has(chart.digest)) {
      this.charts.delete(chart.digest); // re-inserted as the newest
      const named = encodeRequest(JSON.stringify({ ...request, chartDigest: chart.digest }));
      const outcome = await this.call(named, timeoutMs, lookup);
      if (outcome.kind !== 'not-cached') {
        this.charts.set(chart.digest, chart.bytes);
        return outcome;
      }
      this.chartBytes -= chart.bytes;
    }
    // Sent whole, and kept if it fits: the oldest charts make room.
    const keep = chart.bytes <= this.chartCacheBytes;
    const forget: string[] = [];
    for (const [digest, bytes] of this.charts) {
      if (!keep || this.chartBytes + chart.bytes <= this.chartCacheBytes) break;
      forget.push(digest);
      this.charts.delete(digest);
      this.chartBytes -= bytes;
    }
    const whole = encodeRequest(
      JSON.stringify({
        ...request,
        chartFiles: chart.entries,
        chartDigest: keep ? chart.digest : '',
        forgetCharts: forget,
      }),
      chart.data,
    );
    const outcome = this.settle(await this.call(whole, Math.max(1, deadline - performance.now()), lookup));
    // Kept unless Helm's loader refused it; counted either way (a chart the guest turns out not to
    // have is sent again), so nothing the guest keeps escapes the budget.
    if (keep && (outcome.kind === 'ok' || outcome.kind === 'helm-error')) {
      this.charts.set(chart.digest, chart.bytes);
      this.chartBytes += chart.bytes;
    }
    return outcome;
  }

  /** A guest that asked for a chart it was given whole is broken: never reused. */
  private settle(outcome: CallOutcome): Outcome {
    if (outcome.kind !== 'not-cached') return outcome;
    this.discard();
    return { kind: 'panic', message: 'the renderer lost a chart it was just given' };
  }

  private call(
    request: Uint8Array<ArrayBuffer>,
    timeoutMs: number,
    lookup: LookupFunction | undefined,
  ): Promise<CallOutcome> {
    return new Promise<CallOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.finish({ kind: 'timeout' });
        this.discard();
      }, timeoutMs);
      this.job = { done: resolve, lookup, timer };
      truncateSync(this.stderrPath, 0);
      this.worker.postMessage({ request }, [request.buffer]);
    });
  }

  /** Stops the worker; it is never reused. */
  discard(): void {
    this.dead = true;
    void this.worker.terminate();
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'lookup') {
      void this.answerLookup(m.query);
    } else if (m.type === 'result') {
      const text = Buffer.from(m.output).toString('utf8');
      if (m.status === 0) this.finish({ kind: 'ok', output: text, memoryBytes: m.memoryBytes });
      else if (m.status === 1) this.finish({ kind: 'helm-error', message: text, memoryBytes: m.memoryBytes });
      else if (m.status === 3) this.finish({ kind: 'not-cached' });
      else {
        this.finish({ kind: 'panic', message: text });
        this.discard();
      }
    } else if (m.type === 'trap') {
      this.finish({ kind: 'trap', message: m.message, stderr: this.stderr() });
      this.discard();
    }
  }

  /** Runs the caller's lookup and hands the answer (or its error) to the waiting guest. */
  private async answerLookup(query: string): Promise<void> {
    const job = this.job;
    let bytes: Buffer;
    let failed = false;
    try {
      const q = JSON.parse(query) as { apiVersion: string; kind: string; namespace: string; name: string };
      if (!job?.lookup) throw new Error('lookup is not available');
      const obj = await job.lookup(q.apiVersion, q.kind, q.namespace, q.name);
      bytes = Buffer.from(JSON.stringify(obj ?? null), 'utf8');
      if (bytes.length > LOOKUP_ANSWER_LIMIT) {
        throw new Error(
          `the answer to lookup ${q.apiVersion} ${q.kind} ${q.namespace}/${q.name} is ${bytes.length} bytes, above the ${LOOKUP_ANSWER_LIMIT} byte limit`,
        );
      }
    } catch (err) {
      failed = true;
      bytes = Buffer.from(err instanceof Error ? err.message : String(err), 'utf8').subarray(0, 4096);
    }
    // A render stopped meanwhile (timeout) has a dead worker: nobody waits for this answer.
    if (this.job !== job || this.dead) return;
    this.answer.set(bytes);
    Atomics.store(this.control, 1, failed ? -bytes.length : bytes.length);
    Atomics.store(this.control, 0, 1);
    Atomics.notify(this.control, 0);
  }

  private finish(outcome: CallOutcome): void {
    const job = this.job;
    if (!job) return;
    this.job = undefined;
    clearTimeout(job.timer);
    job.done(outcome);
  }

  /**
   * The guest's stderr, its start and its end when long: Go writes "fatal error: out of memory"
   * first and then a trace of every goroutine, so the tail alone loses the reason.
   */
  private stderr(): string {
    let text: string;
    try {
      text = readFileSync(this.stderrPath, 'utf8');
    } catch {
      return '';
    }
    return text.length <= 8192 ? text : `${text.slice(0, 4096)}\n…\n${text.slice(-4096)}`;
  }
}
