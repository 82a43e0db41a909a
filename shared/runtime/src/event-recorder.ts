import { hostname } from 'node:os';
import { ApiError } from './api-error.ts';
import { type Clock, systemClock } from './clock.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './kube-object.ts';
import type { LoggerLike } from './logger.ts';

export type EventSeverity = 'info' | 'error';

/** What happened to an object: `reason` is CamelCase, `message` a sentence free of secrets. */
export interface EventOptions {
  severity: EventSeverity;
  reason: string;
  message: string;
  /** Extra facts for notifications; pass `revision` whenever there is one. */
  metadata?: Record<string, string>;
}

/** The JSON body posted to the notification receiver (ARCHITECTURE.md, event contract). */
export interface NotificationEvent {
  involvedObject: { kind: string; namespace: string; name: string; uid: string; apiVersion: string };
  severity: EventSeverity;
  timestamp: string;
  message: string;
  reason: string;
  metadata: Record<string, string>;
  reportingController: string;
}

export interface EventRecorderOptions {
  client: Pick<KubeClient, 'create' | 'mergePatch'>;
  /** The operator's name, e.g. `source-operator`: `reportingController` and the Event's `source.component`. */
  component: string;
  /** This replica, as the Event's `source.host` and `reportingInstance`; the host name by default. */
  instance?: string;
  /** The notification receiver's URL (`--events-addr`); nothing is posted when absent or empty. */
  eventsAddr?: string;
  logger?: Pick<LoggerLike, 'debug'>;
  clock?: Clock;
  /** Events held per destination before the oldest are dropped; default 1,000. */
  bufferSize?: number;
  /** Deadline of one POST; default 5 s. */
  postTimeoutMs?: number;
  /** Retries of a POST that failed for a network error, 429 or 5xx; default 2. */
  postRetries?: number;
  /** First retry delay, doubled for each further retry; default 1 s. */
  postRetryDelayMs?: number;
}

/** Longest message recorded; longer ones are cut, as Flux does. */
export const MAX_EVENT_MESSAGE = 1024;

/** Repeats of an Event the recorder remembers, to bump `count` instead of creating another Event. */
const AGGREGATE_CACHE_SIZE = 4096;

interface PendingEvent {
  involved: KubeObject;
  options: EventOptions;
  message: string;
  time: number;
}

interface SeenEvent {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
}

/** RFC 3339 with whole seconds, the format of `metav1.Time`. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Cuts `message` to MAX_EVENT_MESSAGE characters without splitting a character. */
export function truncateMessage(message: string): string {
  if (message.length <= MAX_EVENT_MESSAGE) return message;
  const chars = Array.from(message);
  if (chars.length <= MAX_EVENT_MESSAGE) return message;
  return `${chars.slice(0, MAX_EVENT_MESSAGE - 3).join('')}...`;
}

/**
 * A bounded queue drained by one async worker: pushing never waits, and when full the oldest item
 * is dropped and counted.
 */
class Outbox<T> {
  readonly #items: T[] = [];
  readonly #limit: number;
  readonly #deliver: (item: T) => Promise<void>;
  readonly #onError: (err: unknown, item: T) => void;
  #running = false;
  #idle: (() => void)[] = [];
  dropped = 0;

  constructor(limit: number, deliver: (item: T) => Promise<void>, onError: (err: unknown, item: T) => void) {
    this.#limit = Math.max(1, limit);
    this.#deliver = deliver;
    this.#onError = onError;
  }

  push(item: T): void {
    if (this.#items.length >= this.#limit) {
      this.#items.shift();
      this.dropped++;
    }
    this.#items.push(item);
    if (!this.#running) {
      this.#running = true;
      // Start after the caller's synchronous code, so it never runs any of the delivery.
      queueMicrotask(() => void this.#drain());
    }
  }

  get pending(): number {
    return this.#items.length + (this.#running ? 1 : 0);
  }

  /** Resolves once everything pushed so far (and since) is delivered or has failed. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #drain(): Promise<void> {
    for (let item = this.#items.shift(); item !== undefined; item = this.#items.shift()) {
      try {
        await this.#deliver(item);
      } catch (err) {
        try {
          this.#onError(err, item);
        } catch {
          // Reporting a failure must not stop the drain.
        }
      }
    }
    this.#running = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}

/**
 * Records what happens to objects as Kubernetes Events and, when an events address is set, posts
 * them to the notification receiver. `record` never blocks or throws: delivery happens later from
 * bounded buffers, and failures are only logged at debug.
 */
export class EventRecorder {
  readonly #client: EventRecorderOptions['client'];
  readonly #component: string;
  readonly #instance: string;
  /** The receiver's URL without credentials; they travel in #eventsAuth. */
  readonly #eventsUrl: string | undefined;
  readonly #eventsAuth: string | undefined;
  readonly #eventsOrigin: string | undefined;
  readonly #logger: Pick<LoggerLike, 'debug'> | undefined;
  readonly #clock: Clock;
  readonly #postTimeoutMs: number;
  readonly #postRetries: number;
  readonly #postRetryDelayMs: number;
  readonly #kube: Outbox<PendingEvent>;
  readonly #posts: Outbox<PendingEvent> | undefined;
  readonly #seen = new Map<string, SeenEvent>();
  #seq = Math.floor(Math.random() * 1_000_000);

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#component = options.component;
    this.#instance = options.instance ?? hostname();
    if (options.eventsAddr) {
      const url = new URL(options.eventsAddr);
      if (url.username || url.password) {
        const user = decodeURIComponent(url.username);
        const password = decodeURIComponent(url.password);
        this.#eventsAuth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
        url.username = '';
        url.password = '';
      }
      this.#eventsUrl = url.href;
      this.#eventsOrigin = url.origin;
    }
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#postTimeoutMs = options.postTimeoutMs ?? 5_000;
    this.#postRetries = options.postRetries ?? 2;
    this.#postRetryDelayMs = options.postRetryDelayMs ?? 1_000;
    const size = options.bufferSize ?? 1_000;
    this.#kube = new Outbox(
      size,
      (e) => this.#writeEvent(e),
      (err, e) => this.#failed('create Event', err, e),
    );
    if (this.#eventsUrl) {
      this.#posts = new Outbox(
        size,
        (e) => this.#post(e),
        (err, e) => this.#failed('post event', err, e),
      );
    }
  }

  /** Queues an event about `obj`; returns at once and never throws. */
  record(obj: KubeObject, options: EventOptions): void {
    try {
      const pending: PendingEvent = {
        involved: obj,
        options,
        message: truncateMessage(String(options.message)),
        time: this.#clock.now(),
      };
      this.#kube.push(pending);
      this.#posts?.push(pending);
    } catch (err) {
      this.#logger?.debug({ err: (err as Error).message }, 'event not recorded');
    }
  }

  /** Events dropped because a buffer was full, over both destinations. */
  get dropped(): number {
    return this.#kube.dropped + (this.#posts?.dropped ?? 0);
  }

  /** Events not yet delivered (or failed), over both destinations. */
  get pending(): number {
    return this.#kube.pending + (this.#posts?.pending ?? 0);
  }

  /** Waits up to `timeoutMs` for the buffers to drain; true when they did. For shutdown. */
  async flush(timeoutMs: number): Promise<boolean> {
    const timer = new AbortController();
    let drained = false;
    await Promise.race([
      Promise.all([this.#kube.idle(), this.#posts?.idle()]).then(() => {
        drained = true;
      }),
      this.#clock.sleep(timeoutMs, timer.signal),
    ]);
    timer.abort();
    return drained;
  }

  /** The JSON body `record` posts for an event. */
  notification(obj: KubeObject, options: EventOptions, timeMs: number): NotificationEvent {
    return {
      involvedObject: {
        kind: obj.kind,
        namespace: obj.metadata.namespace ?? '',
        name: obj.metadata.name ?? '',
        uid: obj.metadata.uid ?? '',
        apiVersion: obj.apiVersion,
      },
      severity: options.severity,
      timestamp: rfc3339(timeMs),
      message: truncateMessage(String(options.message)),
      reason: options.reason,
      metadata: { ...options.metadata },
      reportingController: this.#component,
    };
  }

  async #writeEvent(e: PendingEvent): Promise<void> {
    const { involved, options } = e;
    const type = options.severity === 'error' ? 'Warning' : 'Normal';
    const namespace = involved.metadata.namespace || 'default';
    const now = rfc3339(e.time);
    const key = [
      involved.metadata.uid ?? `${involved.kind}/${namespace}/${involved.metadata.name}`,
      type,
      options.reason,
      e.message,
    ].join('\u0000');

    const seen = this.#seen.get(key);
    if (seen) {
      try {
        await this.#client.mergePatch(
          { apiVersion: 'v1', kind: 'Event', namespace: seen.namespace, name: seen.name },
          { count: seen.count + 1, lastTimestamp: now },
        );
        seen.count++;
        // Refresh its place in the LRU order.
        this.#seen.delete(key);
        this.#seen.set(key, seen);
        return;
      } catch (err) {
        this.#seen.delete(key);
        // An Event expires (1 h by default); start a new one.
        if (!(err instanceof ApiError && err.isNotFound)) throw err;
      }
    }

    const name = this.#eventName(involved.metadata.name ?? involved.kind.toLowerCase());
    await this.#client.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: involved.apiVersion,
        kind: involved.kind,
        name: involved.metadata.name,
        namespace: involved.metadata.namespace,
        uid: involved.metadata.uid,
        resourceVersion: involved.metadata.resourceVersion,
      },
      reason: options.reason,
      message: e.message,
      type,
      source: { component: this.#component, host: this.#instance },
      reportingComponent: this.#component,
      reportingInstance: this.#instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    this.#seen.set(key, { namespace, name, count: 1, firstTimestamp: now });
    if (this.#seen.size > AGGREGATE_CACHE_SIZE) this.#seen.delete(this.#seen.keys().next().value!);
  }

  /** `<object name>.<hex>`, the hex from the time in ns as client-go does, unique within the process. */
  #eventName(objectName: string): string {
    this.#seq = (this.#seq + 1) % 1_000_000;
    const suffix = (BigInt(Math.floor(this.#clock.now())) * 1_000_000n + BigInt(this.#seq)).toString(16);
    return `${objectName.slice(0, 252 - suffix.length)}.${suffix}`;
  }

  async #post(e: PendingEvent): Promise<void> {
    const body = JSON.stringify(this.notification(e.involved, e.options, e.time));
    for (let attempt = 0; ; attempt++) {
      const retryable = await this.#postOnce(body);
      if (retryable === undefined) return;
      if (attempt >= this.#postRetries) throw retryable;
      await this.#clock.sleep(this.#postRetryDelayMs * 2 ** attempt);
    }
  }

  /** Posts once; undefined on success, the error when a retry may help; throws when none can. */
  async #postOnce(body: string): Promise<Error | undefined> {
    const abort = new AbortController();
    const timer = this.#clock.setTimeout(() => abort.abort(), this.#postTimeoutMs);
    let status: number;
    try {
      const res = await fetch(this.#eventsUrl!, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': this.#component,
          ...(this.#eventsAuth ? { Authorization: this.#eventsAuth } : {}),
        },
        body,
        signal: abort.signal,
      });
      status = res.status;
      await res.arrayBuffer();
    } catch (err) {
      if (abort.signal.aborted) return new Error(`no answer within ${this.#postTimeoutMs} ms`);
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return new Error(cause ? `${(err as Error).message} (${cause})` : (err as Error).message);
    } finally {
      this.#clock.clearTimeout(timer);
    }
    if (status >= 200 && status < 300) return undefined;
    const err = new Error(`the receiver answered HTTP ${status}`);
    if (status === 429 || status >= 500) return err;
    throw err;
  }

  #failed(what: string, err: unknown, e: PendingEvent): void {
    let message = err instanceof Error ? err.message : String(err);
    // A URL's path may carry a token (webhook-style receivers): logs name the receiver by origin only.
    if (this.#eventsUrl) message = message.replaceAll(this.#eventsUrl, this.#eventsOrigin!);
    this.#logger?.debug(
      {
        err: message,
        kind: e.involved?.kind,
        namespace: e.involved?.metadata?.namespace,
        name: e.involved?.metadata?.name,
        reason: e.options.reason,
        eventsAddr: what === 'post event' ? this.#eventsOrigin : undefined,
      },
      `${what} failed`,
    );
  }
}
