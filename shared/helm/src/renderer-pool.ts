// A few warm renderers and a queue in front of them. A renderer is bound to one compiled module
// (file and memory cap), so a request takes an idle renderer of its module, or starts one while
// fewer than `size` exist (retiring an idle renderer of another module if need be), or waits its
// turn. Idle renderers let the process exit (their worker is unref'd) and are retired after
// `idleMs`; one that timed out, trapped or grew past `retireAboveBytes` is never reused.
import { HelmRenderError } from './errors.ts';
import { type Outcome, RendererWorker } from './renderer-worker.ts';
import type { WasmModule } from './wasm-api.ts';

export interface HelmPoolOptions {
  /** Warm renderers at most, busy or idle; each is one worker thread and one Go instance. Default 2. */
  size?: number;
  /** An idle renderer is retired after this long. Default 60 s. */
  idleMs?: number;
  /**
   * A renderer whose linear memory grew past this during a render is retired after it, since
   * WebAssembly memory never shrinks. Default 512 MiB.
   */
  retireAboveBytes?: number;
}

/** What a pool needs to start a renderer: the compiled module and a key that names it. */
export interface RendererModule {
  key: string;
  module: () => Promise<WasmModule>;
  /** The chart files each renderer's guest may keep loaded between renders (RendererWorker). */
  chartCacheBytes?: number;
}

// A cold start (worker, instantiate, Go runtime and Helm init) that takes longer is a broken host.
const START_TIMEOUT_MS = 120_000;

interface Slot {
  /** Unset while the module compiles, before the worker exists. */
  worker?: RendererWorker;
  key: string;
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
}

interface Waiter {
  module: RendererModule;
  resolve: (slot: Slot) => void;
  reject: (err: unknown) => void;
}

export class HelmRendererPool {
  readonly size: number;
  readonly idleMs: number;
  readonly retireAboveBytes: number;
  private readonly slots = new Set<Slot>();
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private startedCount = 0;

  constructor(opts: HelmPoolOptions = {}) {
    this.size = opts.size ?? 2;
    this.idleMs = opts.idleMs ?? 60_000;
    this.retireAboveBytes = opts.retireAboveBytes ?? 512 << 20;
    if (!(Number.isInteger(this.size) && this.size >= 1))
      throw new RangeError('HelmRendererPool: size must be a positive integer');
    if (!(this.idleMs > 0)) throw new RangeError('HelmRendererPool: idleMs must be positive');
  }

  /** Renderers started over the pool's life (each a cold start). */
  get started(): number {
    return this.startedCount;
  }

  /** Renderers alive now (idle, busy or starting). */
  get renderers(): number {
    return this.slots.size;
  }

  /**
   * Runs `use` on a renderer of `module` of its own, then keeps the renderer warm if the
   * outcome leaves it consistent, or discards it.
   */
  async withRenderer(
    module: RendererModule,
    use: (worker: RendererWorker) => Promise<Outcome>,
  ): Promise<Outcome> {
    const slot = await this.acquire(module);
    const worker = slot.worker!;
    let outcome: Outcome | undefined;
    try {
      outcome = await use(worker);
      return outcome;
    } finally {
      const consistent =
        outcome === undefined
          ? worker.idle // `use` failed before handing the request over
          : (outcome.kind === 'ok' || outcome.kind === 'helm-error') &&
            outcome.memoryBytes <= this.retireAboveBytes;
      this.release(slot, consistent);
    }
  }

  /**
   * Compiles `module` and starts renderers of it until `count` (default: size) are alive, and
   * leaves them idle.
   */
  async prewarm(module: RendererModule, count = this.size): Promise<void> {
    await module.module();
    const starts: Promise<void>[] = [];
    for (let i = this.slots.size; i < Math.min(count, this.size); i++) {
      starts.push(this.acquire(module).then((slot) => this.release(slot, true)));
    }
    await Promise.all(starts);
  }

  /** Stops the idle renderers now and every busy one when its render ends. */
  close(): void {
    this.closed = true;
    for (const slot of this.slots) if (!slot.busy) this.retire(slot);
    for (const w of this.waiters.splice(0)) w.reject(new HelmRenderError('the Helm renderer pool is closed'));
  }

  private acquire(module: RendererModule): Promise<Slot> {
    if (this.closed) return Promise.reject(new HelmRenderError('the Helm renderer pool is closed'));
    return new Promise((resolve, reject) => {
      this.waiters.push({ module, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiters.length > 0) {
      const next = this.waiters[0]!;
      const idle = [...this.slots].find((s) => !s.busy && s.key === next.module.key && s.worker?.alive);
      if (idle) {
        this.waiters.shift();
        this.take(idle);
        next.resolve(idle);
        continue;
      }
      if (this.slots.size >= this.size) {
        const other = [...this.slots].find((s) => !s.busy);
        if (!other) return; // all busy: the next release pumps again
        this.retire(other);
      }
      this.waiters.shift();
      this.start(next);
    }
  }

  private start(waiter: Waiter): void {
    const slot: Slot = { key: waiter.module.key, busy: true };
    this.slots.add(slot);
    this.startedCount++;
    const started = (async () => {
      const worker = new RendererWorker(await waiter.module.module(), {
        chartCacheBytes: waiter.module.chartCacheBytes,
      });
      slot.worker = worker;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new HelmRenderError(`the Helm renderer did not start within ${START_TIMEOUT_MS} ms`)),
          START_TIMEOUT_MS,
        );
        timer.unref();
      });
      try {
        await Promise.race([worker.started(), late]);
      } finally {
        clearTimeout(timer);
      }
    })();
    started.then(
      () => {
        if (this.closed) {
          this.retire(slot);
          waiter.reject(new HelmRenderError('the Helm renderer pool is closed'));
        } else {
          slot.worker!.hold(true);
          waiter.resolve(slot);
        }
      },
      (err: unknown) => {
        this.retire(slot);
        waiter.reject(err);
        this.pump();
      },
    );
  }

  private take(slot: Slot): void {
    slot.busy = true;
    clearTimeout(slot.idleTimer);
    slot.worker!.hold(true);
  }

  private release(slot: Slot, reusable: boolean): void {
    if (!reusable || this.closed || !slot.worker?.alive) {
      this.retire(slot);
    } else {
      slot.busy = false;
      slot.worker!.hold(false);
      slot.idleTimer = setTimeout(() => this.retire(slot), this.idleMs);
      slot.idleTimer.unref();
    }
    this.pump();
  }

  private retire(slot: Slot): void {
    this.slots.delete(slot);
    clearTimeout(slot.idleTimer);
    slot.worker?.discard();
  }
}
