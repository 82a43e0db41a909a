import { createInterface } from 'node:readline';
import { ApiError, type ApiStatus } from './api-error.ts';
import { HttpsTransport, loadKubeConfig } from './https-transport.ts';
import type { KubeList, KubeObject, ObjectKey } from './kube-object.ts';
import { type ResourceMapping, RestMapper } from './rest-mapper.ts';
import { TokenBucket } from './token-bucket.ts';
import type { ApiTransport, TransportRequest } from './transport.ts';

export type Query = Record<string, string | number | boolean | undefined>;

/** Act as another user, as Flux does for `spec.serviceAccountName`; groups may repeat. */
export interface Impersonation {
  user: string;
  groups?: string[];
}

export interface RequestOptions {
  method: TransportRequest['method'];
  path: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
  impersonate?: Impersonation;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  dryRun?: boolean;
  impersonate?: Impersonation;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` tokens until the list is complete. */
  limit?: number;
  impersonate?: Impersonation;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  signal?: AbortSignal;
}

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface KubeClientOptions {
  qps?: number;
  burst?: number;
  userAgent?: string;
  /** Per-request deadline for non-watch calls. */
  timeoutMs?: number;
}

const JSON_CONTENT = 'application/json';
const APPLY_CONTENT = 'application/apply-patch+yaml';
const MERGE_CONTENT = 'application/merge-patch+json';
const JSON_PATCH_CONTENT = 'application/json-patch+json';

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function parseStatus(body: string): ApiStatus | undefined {
  try {
    const parsed = JSON.parse(body) as ApiStatus;
    return parsed && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Builds `/api[s]/<gv>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]`. */
export function resourcePath(
  mapping: Pick<ResourceMapping, 'group' | 'version' | 'plural' | 'namespaced'>,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = mapping.group === '' ? `/api/${mapping.version}` : `/apis/${mapping.group}/${mapping.version}`;
  const ns = mapping.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  let path = `${base}${ns}/${mapping.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}

/**
 * A raw JSON Kubernetes client for any kind: reads, paginated lists, watches, server-side apply,
 * status patches, impersonation and a client-side rate limit. Objects stay plain JSON end to end.
 */
export class KubeClient {
  readonly #mapper: RestMapper;
  readonly #transport: ApiTransport;
  readonly #limiter: TokenBucket;
  /** Per impersonated user, a budget of its own (see #limiterFor). */
  readonly #tenantLimiters = new Map<string, TokenBucket>();
  readonly #qps: number;
  readonly #burst: number;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  /** The client whose connection, discovery and budgets this one uses: itself, unless impersonating. */
  #root: KubeClient = this;
  /** Who every request acts as unless it names its own (see impersonating). */
  #as: Impersonation | undefined;

  constructor(transport: ApiTransport, options: KubeClientOptions = {}) {
    this.#transport = transport;
    this.#qps = options.qps ?? 50;
    this.#burst = options.burst ?? 100;
    this.#limiter = new TokenBucket(this.#qps, this.#burst);
    this.#userAgent = options.userAgent ?? 'mooring';
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#mapper = new RestMapper((path) => this.request({ method: 'GET', path }));
  }

  /** Maps apiVersion+kind to its REST resource; shared with the clients made by impersonating(). */
  get mapper(): RestMapper {
    return this.#root.#mapper;
  }

  /**
   * This client's connection, discovery cache and rate budgets with every request made as `as`
   * (unless a request names its own): code that takes a client, such as a render reading its
   * Secrets or a diff's dry runs, then acts with that user's rights and the API server's RBAC
   * decides as it would for them. Closing it leaves the connection open.
   */
  impersonating(as: Impersonation): KubeClient {
    const root = this.#root;
    const client = new KubeClient(root.#transport, {
      qps: root.#qps,
      burst: root.#burst,
      userAgent: root.#userAgent,
      timeoutMs: root.#timeoutMs,
    });
    client.#root = root;
    client.#as = as;
    return client;
  }

  /** A client for the kubeconfig at `path` (or the default kubeconfig resolution). */
  static async fromKubeconfig(path?: string, options?: KubeClientOptions): Promise<KubeClient> {
    return new KubeClient(await HttpsTransport.create(loadKubeConfig(path)), options);
  }

  close(): void {
    if (this.#root === this) this.#transport.close();
  }

  #headers(
    contentType: string | undefined,
    impersonate: Impersonation | undefined,
  ): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = { 'User-Agent': this.#userAgent };
    if (contentType) headers['Content-Type'] = contentType;
    if (impersonate) {
      headers['Impersonate-User'] = impersonate.user;
      if (impersonate.groups?.length) headers['Impersonate-Group'] = impersonate.groups;
    }
    return headers;
  }

  /**
   * The token bucket a request draws from: the operator's own, or for a request made as an
   * impersonated user (a tenant's service account) that user's, with the same limits. One shared
   * bucket let a thousand tenants' applies starve the operator's own status writes and each other
   * (at --kube-api-qps 50, Mooring was slower than Flux, whose impersonated clients have no client
   * limit at all); a bucket per identity keeps a limit on every one of them, and the API server's
   * priority and fairness governs them together.
   */
  #limiterFor(impersonate: Impersonation | undefined): TokenBucket {
    if (!impersonate) return this.#limiter;
    let bucket = this.#tenantLimiters.get(impersonate.user);
    if (!bucket) {
      bucket = new TokenBucket(this.#qps, this.#burst);
      this.#tenantLimiters.set(impersonate.user, bucket);
    }
    return bucket;
  }

  /** One API call; a non-2xx answer becomes an ApiError with the server's message. */
  async request<T>(opts: RequestOptions): Promise<T> {
    const impersonate = opts.impersonate ?? this.#as;
    await this.#root.#limiterFor(impersonate).take();
    const path = opts.path + queryString(opts.query);
    const res = await this.#transport.send({
      method: opts.method,
      path,
      headers: this.#headers(
        opts.body === undefined ? undefined : (opts.contentType ?? JSON_CONTENT),
        impersonate,
      ),
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? this.#timeoutMs,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new ApiError(opts.method, opts.path, res.statusCode, parseStatus(res.body), res.body);
    }
    return (res.body ? JSON.parse(res.body) : undefined) as T;
  }

  async #path(
    apiVersion: string,
    kind: string,
    namespace?: string,
    name?: string,
    sub?: string,
  ): Promise<string> {
    const mapping = await this.mapper.map(apiVersion, kind);
    if (mapping.namespaced && name !== undefined && !namespace) {
      throw new Error(`${kind} ${name} is namespaced but no namespace was given`);
    }
    return resourcePath(mapping, namespace, name, sub);
  }

  async get<T extends KubeObject = KubeObject>(key: ObjectKey, impersonate?: Impersonation): Promise<T> {
    const path = await this.#path(key.apiVersion, key.kind, key.namespace, key.name);
    return this.request<T>({ method: 'GET', path, impersonate });
  }

  /** Like get, but `undefined` when the object does not exist. */
  async getOrUndefined<T extends KubeObject = KubeObject>(key: ObjectKey): Promise<T | undefined> {
    try {
      return await this.get<T>(key);
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) return undefined;
      throw err;
    }
  }

  /** Lists every page; `metadata.resourceVersion` of the result is the one a watch should start from. */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: ListOptions = {},
  ): Promise<KubeList<T>> {
    const path = await this.#path(apiVersion, kind, opts.namespace);
    const items: T[] = [];
    let cont: string | undefined;
    let last: KubeList<T>;
    do {
      last = await this.request<KubeList<T>>({
        method: 'GET',
        path,
        query: {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          limit: opts.limit ?? 500,
          continue: cont,
        },
        impersonate: opts.impersonate,
      });
      items.push(...last.items);
      cont = last.metadata.continue || undefined;
    } while (cont);
    // List items carry no apiVersion/kind; put them back so every object is self-describing.
    for (const item of items) {
      item.apiVersion ??= apiVersion;
      item.kind ??= kind;
    }
    return {
      apiVersion: last.apiVersion,
      kind: last.kind,
      metadata: { resourceVersion: last.metadata.resourceVersion },
      items,
    };
  }

  async create<T extends KubeObject>(
    obj: T,
    opts: { dryRun?: boolean; fieldManager?: string } = {},
  ): Promise<T> {
    const path = await this.#path(obj.apiVersion, obj.kind, obj.metadata.namespace);
    return this.request<T>({
      method: 'POST',
      path,
      body: obj,
      query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager },
    });
  }

  /** Server-side apply: the object is the full intent of `fieldManager`. */
  async apply<T extends KubeObject>(obj: T, opts: ApplyOptions): Promise<T> {
    return this.#apply(obj, opts, undefined);
  }

  /** Server-side apply of `status` through the status subresource. */
  async applyStatus<T extends KubeObject>(obj: T, opts: ApplyOptions): Promise<T> {
    return this.#apply(obj, opts, 'status');
  }

  async #apply<T extends KubeObject>(obj: T, opts: ApplyOptions, sub: string | undefined): Promise<T> {
    const name = obj.metadata.name;
    if (!name) throw new Error(`cannot apply ${obj.kind} without metadata.name`);
    const path = await this.#path(obj.apiVersion, obj.kind, obj.metadata.namespace, name, sub);
    return this.request<T>({
      method: 'PATCH',
      path,
      body: obj,
      contentType: APPLY_CONTENT,
      impersonate: opts.impersonate,
      query: {
        fieldManager: opts.fieldManager,
        force: opts.force ? true : undefined,
        dryRun: opts.dryRun ? 'All' : undefined,
      },
    });
  }

  /** JSON merge patch, for the few writes that must not take field ownership (finalizers, annotations). */
  async mergePatch<T extends KubeObject = KubeObject>(
    key: ObjectKey,
    patch: unknown,
    sub?: string,
    impersonate?: Impersonation,
  ): Promise<T> {
    const path = await this.#path(key.apiVersion, key.kind, key.namespace, key.name, sub);
    return this.request<T>({ method: 'PATCH', path, body: patch, contentType: MERGE_CONTENT, impersonate });
  }

  /** RFC 6902 JSON patch, for surgical edits such as removing another manager's managedFields entry. */
  async jsonPatch<T extends KubeObject = KubeObject>(
    key: ObjectKey,
    operations: unknown[],
    impersonate?: Impersonation,
  ): Promise<T> {
    const path = await this.#path(key.apiVersion, key.kind, key.namespace, key.name);
    return this.request<T>({
      method: 'PATCH',
      path,
      body: operations,
      contentType: JSON_PATCH_CONTENT,
      impersonate,
    });
  }

  /** Deletes an object; a missing object is not an error. Returns whether it existed. */
  async delete(
    key: ObjectKey,
    opts: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; impersonate?: Impersonation } = {},
  ): Promise<boolean> {
    const path = await this.#path(key.apiVersion, key.kind, key.namespace, key.name);
    try {
      await this.request({
        method: 'DELETE',
        path,
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: opts.propagationPolicy ?? 'Background',
        },
        impersonate: opts.impersonate,
      });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) return false;
      throw err;
    }
  }

  /**
   * Streams a text resource (e.g. a pod's `log` subresource) line by line until the server ends it
   * or `signal` aborts. An HTTP error at connect is thrown as an ApiError.
   */
  async *streamLines(path: string, query?: Query, signal?: AbortSignal): AsyncGenerator<string> {
    await this.#root.#limiterFor(this.#as).take();
    const res = await this.#transport.openStream({
      method: 'GET',
      path: path + queryString(query),
      headers: { ...this.#headers(undefined, this.#as), Accept: 'text/plain, */*' },
      signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      throw new ApiError('GET', path, res.statusCode, parseStatus(body), body);
    }
    const lines = createInterface({ input: res.body, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const line of lines) yield line;
    } finally {
      lines.close();
      res.body.destroy();
    }
  }

  /**
   * Opens a watch and yields its events until the server ends it, `signal` aborts, or the stream
   * fails. An HTTP error at connect (410 included) is thrown as an ApiError.
   */
  async *watch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    const path = await this.#path(apiVersion, kind, opts.namespace);
    await this.#root.#limiterFor(this.#as).take();
    const query = queryString({
      watch: 1,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: opts.timeoutSeconds,
      allowWatchBookmarks: opts.allowWatchBookmarks ? true : undefined,
    });
    const res = await this.#transport.openStream({
      method: 'GET',
      path: path + query,
      headers: this.#headers(undefined, this.#as),
      signal: opts.signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      throw new ApiError('WATCH', path, res.statusCode, parseStatus(body), body);
    }
    const lines = createInterface({ input: res.body, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const line of lines) {
        if (!line.trim()) continue;
        yield JSON.parse(line) as WatchEvent<T>;
      }
    } finally {
      lines.close();
      res.body.destroy();
    }
  }
}
