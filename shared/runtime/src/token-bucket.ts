import { setTimeout as sleep } from 'node:timers/promises';

/** Client-side request rate limit (client-go's QPS and burst): `burst` requests at once, refilled at `qps`. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, now: () => number = Date.now) {
    if (qps <= 0 || burst < 1) throw new Error(`invalid rate limit: qps=${qps} burst=${burst}`);
    this.#qps = qps;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = burst;
    this.#last = now();
  }

  /** Milliseconds to wait before a request may go; takes the token when it returns 0. */
  reserve(): number {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + (Math.max(0, now - this.#last) / 1000) * this.#qps);
    // A wall clock stepped back must not make the next request wait for the lost time.
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }

  /** Waits until a request may go. */
  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await sleep(wait);
  }
}
