/**
 * An in-memory Kubernetes API server: a fake, for the deterministic simulation of the reconcile
 * loop and for unit tests of the reconcilers' steps. Nothing else uses it.
 *
 * Integration and end-to-end tests keep the real kube-apiserver that hack/ builds, because a fake
 * drifts from the real thing: what a unit test against this fake shows is how one step behaves
 * given what the API server answered, never that the real API server answers so. Two uses need
 * what a real server cannot give. The simulation runs thousands of seeded runs a minute, each with
 * its own schedule of faults, replayed exactly from its seed. A step's unit test (the
 * `steps.unit.test.ts` files under `operators/<name>/src/steps/`, through `FakeApiTransport`
 * below) runs one step on its own, with no cluster, in `npm run test:unit`. So this file models
 * the part of the API the operators rely on, as closely as they can tell:
 *
 * - discovery (`/api`, `/apis`, one APIResourceList per group version) for the client's RESTMapper;
 * - GET, LIST (label selectors of the equality kind; no pagination: `limit` is ignored and every
 *   list is one page) and WATCH from a resourceVersion, with a bounded event window per resource
 *   so an old resourceVersion answers 410 Gone (no bookmarks);
 * - server-side apply (application/apply-patch+yaml) with managed fields per manager (FieldsV1,
 *   lists atomic), field removal when a manager stops applying a field, conflicts without
 *   `force`, `dryRun=All`; JSON merge patch and JSON patch (add, remove, replace, test) as Update
 *   operations; the status subresource; resourceVersion preconditions answering 409;
 * - DELETE with finalizers (deletionTimestamp, and removal once the last finalizer goes);
 * - per kind: generation bumped on spec changes, defaults (Service type, clusterIP, port protocol
 *   and targetPort; Deployment replicas), a Deployment controller that makes every rollout
 *   complete at once and a Namespace that is Active at once, and validation that refuses what the
 *   real server refuses in the objects the simulation writes (names, ConfigMap and Secret data,
 *   Service ports 1–65535, immutable clusterIP and Deployment selector).
 *
 * What it does not model: RBAC and impersonation (headers are ignored), admission webhooks, the
 * namespace controller (a Namespace is deleted at once, content or not), garbage collection and
 * propagation policies, strategic merge patch, PUT, server-side field validation of unknown
 * fields, list-map merge keys in server-side apply (every list is atomic), and CRD schemas.
 *
 * Faults are not injected here; `SimTransport` (sim-transport.ts) decides them per request, and
 * `FakeApiTransport` (the unit tests' transport) injects only the failures a test asks for.
 */
import { PassThrough, Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import type {
  ApiTransport,
  KubeObject,
  TransportRequest,
  TransportResponse,
  TransportStream,
} from '@mooring/runtime';

export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  statusSubresource: boolean;
}

export const RESOURCES: readonly ResourceDef[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    statusSubresource: false,
  },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, statusSubresource: false },
  {
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'kustomize.mooring.dev',
    version: 'v1',
    kind: 'Kustomization',
    plural: 'kustomizations',
    namespaced: true,
    statusSubresource: true,
  },
  // Served because a Kustomization may depend on one: its reconciler watches the kind.
  {
    group: 'helm.mooring.dev',
    version: 'v2',
    kind: 'HelmRelease',
    plural: 'helmreleases',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'source.mooring.dev',
    version: 'v1',
    kind: 'GitRepository',
    plural: 'gitrepositories',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'source.mooring.dev',
    version: 'v1',
    kind: 'OCIRepository',
    plural: 'ocirepositories',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'source.mooring.dev',
    version: 'v1',
    kind: 'HelmRepository',
    plural: 'helmrepositories',
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: 'source.mooring.dev',
    version: 'v1',
    kind: 'HelmChart',
    plural: 'helmcharts',
    namespaced: true,
    statusSubresource: true,
  },
];

export const apiVersionOf = (r: ResourceDef) => (r.group ? `${r.group}/${r.version}` : r.version);

export function resourceFor(apiVersion: string, kind: string): ResourceDef | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

export type Obj = KubeObject & { status?: Record<string, unknown> };
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

export interface ServerRequest {
  method: string;
  /** Path with query string, as the client sends it. */
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

export interface ServerResponse {
  statusCode: number;
  body: string;
}

export type WatchSend = (type: EventType | 'ERROR', object: unknown) => void;

interface StoredEvent {
  rv: number;
  type: EventType;
  object: Obj;
  old?: Obj;
}

interface Route {
  res: ResourceDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

interface Watcher {
  res: ResourceDef;
  namespace?: string;
  selector: Selector;
  send: WatchSend;
}

/** One committed change, for the simulation's bookkeeping (what was deleted, by whom). */
export interface ChangeRecord {
  type: EventType;
  res: ResourceDef;
  object: Obj;
  old?: Obj;
}

/** Thrown inside a handler; becomes a Status response. */
class HttpError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: number, reason: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

const statusBody = (code: number, reason: string, message: string, details?: Record<string, unknown>) =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  });

export const errorResponse = (code: number, reason: string, message: string): ServerResponse => ({
  statusCode: code,
  body: statusBody(code, reason, message),
});

const ok = (obj: unknown, statusCode = 200): ServerResponse => ({ statusCode, body: JSON.stringify(obj) });

/** Objects here are plain JSON; a JSON round trip copies them faster than structuredClone. */
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Metadata the server owns: never part of anyone's field set, never taken from a request. */
const SERVER_METADATA = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

// ---------------------------------------------------------------------------------------------
// Field paths and FieldsV1 (lists are atomic: a list is one leaf)

type Path = string[];
const pathKey = (p: Path) => JSON.stringify(p);

function leavesOf(value: unknown, path: Path = [], out = new Map<string, { path: Path; value: unknown }>()) {
  if (isObj(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leavesOf(v, [...path, k], out);
  } else if (path.length > 0) {
    out.set(pathKey(path), { path, value });
  }
  return out;
}

function getAt(obj: unknown, path: Path): { found: boolean; value?: unknown } {
  let cur: unknown = obj;
  for (const k of path) {
    if (!isObj(cur) || !(k in cur)) return { found: false };
    cur = cur[k];
  }
  return { found: true, value: cur };
}

function setAt(obj: Record<string, unknown>, path: Path, value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    if (!isObj(cur[k])) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

/** Removes the leaf and the objects it leaves empty (below the top level). */
function deleteAt(obj: Record<string, unknown>, path: Path): void {
  const chain: Record<string, unknown>[] = [obj];
  let cur: unknown = obj;
  for (const k of path.slice(0, -1)) {
    if (!isObj(cur) || !isObj(cur[k])) return;
    cur = cur[k];
    chain.push(cur as Record<string, unknown>);
  }
  delete (cur as Record<string, unknown>)[path[path.length - 1]!];
  for (let i = chain.length - 1; i >= 2; i--) {
    if (Object.keys(chain[i]!).length > 0) break;
    delete chain[i - 1]![path[i - 1]!];
  }
}

const overlaps = (a: Path, b: Path) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

export function fieldsV1Of(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let cur = root;
    for (const k of p) {
      const key = `f:${k}`;
      if (!isObj(cur[key])) cur[key] = {};
      cur = cur[key] as Record<string, unknown>;
    }
  }
  return root;
}

export function pathsOfFieldsV1(fields: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (!isObj(fields)) return out;
  const children = Object.keys(fields).filter((k) => k.startsWith('f:'));
  if (children.length === 0) {
    if (prefix.length > 0) out.push(prefix);
    return out;
  }
  for (const k of children) pathsOfFieldsV1(fields[k], [...prefix, k.slice(2)], out);
  return out;
}

function entriesOf(obj: Obj): ManagedFieldsEntry[] {
  const mf = obj.metadata.managedFields;
  return Array.isArray(mf) ? (mf as ManagedFieldsEntry[]) : [];
}

/** The part of a request body (or stored object) that field ownership speaks of. */
function ownedPart(body: Record<string, unknown>, res: ResourceDef, sub: string | undefined) {
  if (sub === 'status') return body.status === undefined ? {} : { status: clone(body.status) };
  const c: Record<string, unknown> = clone(body);
  delete c.apiVersion;
  delete c.kind;
  if (isObj(c.metadata)) {
    const meta = { ...c.metadata };
    for (const k of SERVER_METADATA) delete meta[k];
    if (Object.keys(meta).length) c.metadata = meta;
    else delete c.metadata;
  }
  if (res.statusSubresource) delete c.status;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Label selectors (equality-based only)

type Selector = (labels: Record<string, string> | undefined) => boolean;

function parseSelector(text: string | null): Selector {
  if (!text) return () => true;
  const terms = text.split(',').map((t) => t.trim());
  const tests: Selector[] = terms.map((t) => {
    let m = /^([^!=]+)!=(.*)$/.exec(t);
    if (m) return (l) => l?.[m![1]!] !== m![2];
    m = /^([^!=]+)==?(.*)$/.exec(t);
    if (m) return (l) => l?.[m![1]!] === m![2];
    if (/^![^!=\s]+$/.test(t)) return (l) => !(t.slice(1) in (l ?? {}));
    if (/^[^!=\s()]+$/.test(t)) return (l) => t in (l ?? {});
    throw new HttpError(400, 'BadRequest', `unable to parse requirement: ${t}`);
  });
  return (l) => tests.every((f) => f(l));
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch and JSON patch

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function pointer(path: unknown): string[] {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/')))
    throw new HttpError(422, 'Invalid', `invalid JSON pointer ${String(path)}`);
  if (path === '') return [];
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function jsonPatch(doc: Record<string, unknown>, ops: unknown[]): Record<string, unknown> {
  for (const raw of ops) {
    if (!isObj(raw)) throw new HttpError(400, 'BadRequest', 'json patch operation must be an object');
    const parts = pointer(raw.path);
    if (parts.length === 0) throw new HttpError(422, 'Invalid', 'cannot patch the whole document');
    const parentPath = parts.slice(0, -1);
    const last = parts[parts.length - 1]!;
    const parent = getAt(doc, parentPath);
    const container = parent.value;
    if (!parent.found || typeof container !== 'object' || container === null)
      throw new HttpError(422, 'Invalid', `json patch ${raw.op}: path ${String(raw.path)} not found`);
    const has = Array.isArray(container)
      ? /^\d+$/.test(last) && Number(last) < container.length
      : Object.hasOwn(container, last);
    switch (raw.op) {
      case 'test': {
        const cur = has ? (container as Record<string, unknown>)[last] : undefined;
        if (!has || !isDeepStrictEqual(cur, raw.value))
          throw new HttpError(
            422,
            'Invalid',
            `the server rejected our request due to an error in our request: testing value ${String(raw.path)} failed`,
          );
        break;
      }
      case 'remove':
        if (!has) throw new HttpError(422, 'Invalid', `json patch remove: ${String(raw.path)} not found`);
        if (Array.isArray(container)) container.splice(Number(last), 1);
        else delete (container as Record<string, unknown>)[last];
        break;
      case 'replace':
        if (!has) throw new HttpError(422, 'Invalid', `json patch replace: ${String(raw.path)} not found`);
        (container as Record<string, unknown>)[last] = clone(raw.value);
        break;
      case 'add':
        if (Array.isArray(container)) {
          const i = last === '-' ? container.length : Number(last);
          if (!(i >= 0 && i <= container.length))
            throw new HttpError(422, 'Invalid', `json patch add: index ${last} out of range`);
          container.splice(i, 0, clone(raw.value));
        } else (container as Record<string, unknown>)[last] = clone(raw.value);
        break;
      default:
        throw new HttpError(422, 'Invalid', `json patch operation ${String(raw.op)} is not supported here`);
    }
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Per-kind behaviour: defaults, validation, the instant controllers

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(obj: Obj, causes: string[]): HttpError {
  return new HttpError(
    422,
    'Invalid',
    `${obj.kind} "${obj.metadata.name}" is invalid: ${causes.join(', ')}`,
    { name: obj.metadata.name, kind: obj.kind.toLowerCase(), causes: causes.map((message) => ({ message })) },
  );
}

function validate(obj: Obj, before: Obj | undefined): void {
  const causes: string[] = [];
  const name = obj.metadata.name ?? '';
  const nameRule = obj.kind === 'Namespace' || obj.kind === 'Service' ? DNS_LABEL : DNS_SUBDOMAIN;
  if (!nameRule.test(name) || name.length > (nameRule === DNS_LABEL ? 63 : 253))
    causes.push(`metadata.name: Invalid value: "${name}": must be a lowercase RFC 1123 name`);
  for (const [k, v] of Object.entries(obj.metadata.labels ?? {})) {
    if (typeof v !== 'string' || v.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v))
      causes.push(`metadata.labels: Invalid value: "${String(v)}": a label value for ${k}`);
  }
  const spec = isObj(obj.spec) ? obj.spec : {};
  switch (obj.kind) {
    case 'ConfigMap':
    case 'Secret': {
      const data = obj.data;
      if (data !== undefined && !isObj(data)) causes.push('data: Invalid value: must be a map');
      for (const [k, v] of Object.entries(isObj(data) ? data : {})) {
        if (!DATA_KEY.test(k)) causes.push(`data[${k}]: Invalid value: "${k}": a valid config key`);
        if (typeof v !== 'string') causes.push(`data[${k}]: Invalid value: must be a string`);
        else if (obj.kind === 'Secret' && !BASE64.test(v))
          causes.push(`data[${k}]: Invalid value: illegal base64 data`);
      }
      break;
    }
    case 'Service': {
      const ports = spec.ports;
      if (!Array.isArray(ports) || ports.length === 0) causes.push('spec.ports: Required value');
      for (const [i, p] of (Array.isArray(ports) ? ports : []).entries()) {
        const port = isObj(p) ? p.port : undefined;
        if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
          causes.push(
            `spec.ports[${i}].port: Invalid value: ${String(port)}: must be between 1 and 65535, inclusive`,
          );
      }
      const was = isObj(before?.spec) ? before.spec.clusterIP : undefined;
      if (was !== undefined && spec.clusterIP !== was)
        causes.push(`spec.clusterIP: Invalid value: "${String(spec.clusterIP)}": field is immutable`);
      break;
    }
    case 'Deployment': {
      const selector =
        isObj(spec.selector) && isObj(spec.selector.matchLabels) ? spec.selector.matchLabels : undefined;
      if (!selector || Object.keys(selector).length === 0) causes.push('spec.selector: Required value');
      const template = isObj(spec.template) ? spec.template : {};
      const labels =
        isObj(template.metadata) && isObj(template.metadata.labels) ? template.metadata.labels : {};
      if (selector && !Object.entries(selector).every(([k, v]) => labels[k] === v))
        causes.push(
          'spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`',
        );
      const containers = isObj(template.spec) ? template.spec.containers : undefined;
      if (!Array.isArray(containers) || containers.length === 0)
        causes.push('spec.template.spec.containers: Required value');
      const wasSelector = isObj(before?.spec) ? before.spec.selector : undefined;
      if (wasSelector !== undefined && !isDeepStrictEqual(wasSelector, spec.selector))
        causes.push('spec.selector: Invalid value: field is immutable');
      break;
    }
    case 'Kustomization': {
      const ref = isObj(spec.sourceRef) ? spec.sourceRef : undefined;
      if (!ref || typeof ref.name !== 'string' || typeof ref.kind !== 'string')
        causes.push('spec.sourceRef: Required value');
      if (typeof spec.interval !== 'string') causes.push('spec.interval: Required value');
      if (typeof spec.prune !== 'boolean') causes.push('spec.prune: Required value');
      break;
    }
  }
  if (causes.length) throw invalid(obj, causes);
}

// ---------------------------------------------------------------------------------------------

export interface FakeApiServerOptions {
  /** Wall-clock time for timestamps. */
  now: () => number;
  /** Events each resource's watch window keeps; older resourceVersions answer 410 Gone. */
  watchWindow?: number;
}

const kubeTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

export class FakeApiServer {
  readonly #now: () => number;
  #rv = 1000;
  #uid = 0;
  #ip = 10;
  /** Every stored object, by `group/kind/namespace/name`. */
  readonly objects = new Map<string, Obj>();
  readonly #log = new Map<ResourceDef, StoredEvent[]>();
  readonly #compacted = new Map<ResourceDef, number>();
  readonly #watchers = new Set<Watcher>();
  watchWindow: number;
  /** Called after every committed change (not for dry runs). */
  onChange: ((change: ChangeRecord) => void) | undefined;

  constructor(options: FakeApiServerOptions) {
    this.#now = options.now;
    this.watchWindow = options.watchWindow ?? 200;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  static key(res: ResourceDef, namespace: string | undefined, name: string): string {
    return `${res.group}/${res.kind}/${res.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Obj | undefined {
    const res = resourceFor(apiVersion, kind);
    return res ? this.objects.get(FakeApiServer.key(res, namespace, name)) : undefined;
  }

  /** Objects of one kind, sorted by namespace and name as etcd returns them. */
  list(res: ResourceDef, namespace?: string, selector: Selector = () => true): Obj[] {
    const out: Obj[] = [];
    for (const obj of this.objects.values()) {
      if (obj.kind !== res.kind || obj.apiVersion !== apiVersionOf(res)) continue;
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (!selector(obj.metadata.labels)) continue;
      out.push(obj);
    }
    return out.sort((a, b) => {
      const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
      const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }

  /** Every event older than now is forgotten: any watch from an older resourceVersion gets 410. */
  compact(): void {
    for (const res of RESOURCES) {
      this.#compacted.set(res, this.#rv);
      this.#log.set(res, []);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Requests

  /** One request. Watches go through `watch`; this answers everything else. */
  handle(req: ServerRequest): ServerResponse {
    try {
      return this.#handle(req);
    } catch (err) {
      if (err instanceof HttpError)
        return { statusCode: err.code, body: statusBody(err.code, err.reason, err.message, err.details) };
      throw err;
    }
  }

  #handle(req: ServerRequest): ServerResponse {
    const url = new URL(req.path, 'http://fake-apiserver');
    const discovery = this.#discovery(url.pathname);
    if (discovery) {
      if (req.method !== 'GET') throw new HttpError(405, 'MethodNotAllowed', 'discovery is read-only');
      return ok(discovery);
    }
    const target = this.#route(url.pathname);
    const q = url.searchParams;
    const dryRun = q.get('dryRun') === 'All';
    const header = (name: string) => {
      const v = Object.entries(req.headers).find(([k]) => k.toLowerCase() === name)?.[1];
      return Array.isArray(v) ? v[0] : v;
    };
    const body = () => {
      try {
        return req.body === undefined || req.body === '' ? undefined : (JSON.parse(req.body) as unknown);
      } catch {
        throw new HttpError(400, 'BadRequest', 'the request body is not valid JSON');
      }
    };
    const { res, namespace, name, sub } = target;
    if (sub !== undefined && (sub !== 'status' || !res.statusSubresource))
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${sub})`);
    if (name === undefined) {
      if (req.method === 'GET') {
        if (q.get('watch') === '1' || q.get('watch') === 'true')
          throw new HttpError(400, 'BadRequest', 'watch requests must be opened as a stream');
        const items = this.list(res, namespace, parseSelector(q.get('labelSelector')));
        return ok({
          apiVersion: apiVersionOf(res),
          kind: `${res.kind}List`,
          metadata: { resourceVersion: String(this.#rv) },
          items,
        });
      }
      if (req.method === 'POST') return this.#create(res, namespace, body(), q.get('fieldManager'), dryRun);
      throw new HttpError(405, 'MethodNotAllowed', `${req.method} on a collection is not supported`);
    }
    const key = FakeApiServer.key(res, namespace, name);
    const manager = q.get('fieldManager') ?? (header('user-agent') ?? 'unknown').split('/')[0] ?? 'unknown';
    switch (req.method) {
      case 'GET': {
        const obj = this.objects.get(key);
        if (!obj) throw this.#notFound(res, name);
        return ok(obj);
      }
      case 'PATCH': {
        const type = (header('content-type') ?? '').split(';')[0]!.trim();
        const patch = body();
        if (type === 'application/apply-patch+yaml') {
          const fm = q.get('fieldManager');
          if (!fm)
            throw new HttpError(
              422,
              'Invalid',
              'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            );
          return this.#apply(res, namespace, name, patch, fm, q.get('force') === 'true', dryRun, sub);
        }
        const before = this.objects.get(key);
        if (!before) throw this.#notFound(res, name);
        if (type === 'application/merge-patch+json') {
          if (!isObj(patch)) throw new HttpError(400, 'BadRequest', 'a merge patch must be an object');
          const rv = isObj(patch.metadata) ? patch.metadata.resourceVersion : undefined;
          if (typeof rv === 'string' && rv !== before.metadata.resourceVersion)
            throw this.#conflict(res, name);
          const after = mergePatch(clone(before), patch) as Obj;
          return this.#update(res, before, after, manager, sub, dryRun, false);
        }
        if (type === 'application/json-patch+json') {
          if (!Array.isArray(patch)) throw new HttpError(400, 'BadRequest', 'a JSON patch must be a list');
          const after = jsonPatch(clone(before) as Record<string, unknown>, patch) as Obj;
          if (!isObj(after.metadata)) throw new HttpError(422, 'Invalid', 'metadata: Required value');
          const touched = patch.some(
            (op) => isObj(op) && typeof op.path === 'string' && op.path.startsWith('/metadata/managedFields'),
          );
          return this.#update(res, before, after, manager, sub, dryRun, touched);
        }
        throw new HttpError(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format: ${type}`,
        );
      }
      case 'DELETE':
        if (sub) throw new HttpError(405, 'MethodNotAllowed', 'cannot delete a subresource');
        return this.#delete(res, key, name);
      default:
        throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not supported by the fake API server`);
    }
  }

  #discovery(pathname: string): unknown {
    const p = pathname.replace(/\/+$/, '');
    if (p === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (p === '/apis') {
      const groups = [...new Set(RESOURCES.filter((r) => r.group).map((r) => r.group))].map((g) => {
        const versions = [...new Set(RESOURCES.filter((r) => r.group === g).map((r) => r.version))].map(
          (v) => ({
            groupVersion: `${g}/${v}`,
            version: v,
          }),
        );
        return { name: g, versions, preferredVersion: versions[0] };
      });
      return { kind: 'APIGroupList', apiVersion: 'v1', groups };
    }
    const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(p);
    if (!m) return undefined;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3]!;
    const defs = RESOURCES.filter((r) => r.group === group && r.version === version);
    if (defs.length === 0)
      throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
    const resources = defs.flatMap((r) => {
      const main = {
        name: r.plural,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'],
      };
      return r.statusSubresource
        ? [
            main,
            {
              name: `${r.plural}/status`,
              singularName: '',
              namespaced: r.namespaced,
              kind: r.kind,
              verbs: ['get', 'patch'],
            },
          ]
        : [main];
    });
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources,
    };
  }

  #route(pathname: string): Route {
    const seg = pathname.split('/').filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (seg[0] === 'api' && seg.length >= 3) {
      group = '';
      version = seg[1]!;
      rest = seg.slice(2);
    } else if (seg[0] === 'apis' && seg.length >= 4) {
      group = seg[1]!;
      version = seg[2]!;
      rest = seg.slice(3);
    } else throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
    const find = (plural: string | undefined) =>
      RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      const res = find(rest[2]);
      if (res?.namespaced && rest.length <= 5)
        return { res, namespace: rest[1], name: rest[3], sub: rest[4] };
    }
    const res = find(rest[0]);
    if (!res || rest.length > 3)
      throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
    if (res.namespaced && rest.length > 1)
      throw new HttpError(404, 'NotFound', `${res.kind} is namespaced: no namespace in ${pathname}`);
    return { res, name: rest[1], sub: rest[2] };
  }

  #notFound(res: ResourceDef, name: string): HttpError {
    return new HttpError(
      404,
      'NotFound',
      `${res.plural}${res.group ? `.${res.group}` : ''} "${name}" not found`,
      {
        name,
        group: res.group,
        kind: res.plural,
      },
    );
  }

  #conflict(res: ResourceDef, name: string): HttpError {
    return new HttpError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${res.plural}${res.group ? `.${res.group}` : ''} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  }

  #requireNamespace(res: ResourceDef, namespace: string | undefined): void {
    if (!res.namespaced) return;
    const ns = this.objects.get(FakeApiServer.key(RESOURCES[0]!, undefined, namespace ?? ''));
    if (!ns) throw new HttpError(404, 'NotFound', `namespaces "${namespace}" not found`);
    if (ns.metadata.deletionTimestamp)
      throw new HttpError(
        403,
        'Forbidden',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
  }

  #fresh(res: ResourceDef, namespace: string | undefined, name: string): Obj {
    return {
      apiVersion: apiVersionOf(res),
      kind: res.kind,
      metadata: res.namespaced ? { name, namespace } : { name },
    };
  }

  #checkBody(res: ResourceDef, body: unknown, namespace: string | undefined, name: string | undefined) {
    if (!isObj(body) || !isObj(body.metadata))
      throw new HttpError(400, 'BadRequest', 'the body must be an object with metadata');
    if (body.apiVersion !== apiVersionOf(res) || body.kind !== res.kind)
      throw new HttpError(
        400,
        'BadRequest',
        `the body is a ${String(body.apiVersion)} ${String(body.kind)}, not a ${res.kind}`,
      );
    if (name !== undefined && body.metadata.name !== name)
      throw new HttpError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
    if (res.namespaced && body.metadata.namespace !== undefined && body.metadata.namespace !== namespace)
      throw new HttpError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    return body as Record<string, unknown> & { metadata: Record<string, unknown> };
  }

  #create(
    res: ResourceDef,
    namespace: string | undefined,
    raw: unknown,
    manager: string | null,
    dryRun: boolean,
  ) {
    const body = this.#checkBody(res, raw, namespace, undefined);
    const name = body.metadata.name;
    if (typeof name !== 'string' || !name)
      throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    const key = FakeApiServer.key(res, namespace, name);
    if (this.objects.has(key))
      throw new HttpError(409, 'AlreadyExists', `${res.plural} "${name}" already exists`);
    this.#requireNamespace(res, namespace);
    const config = ownedPart(body, res, undefined);
    const obj = { ...this.#fresh(res, namespace, name), ...config } as Obj;
    obj.metadata = { ...(config.metadata as object), ...this.#fresh(res, namespace, name).metadata };
    const paths = [...leavesOf(config).values()].map((l) => l.path);
    if (paths.length)
      obj.metadata.managedFields = [
        {
          manager: manager ?? 'unknown',
          operation: 'Update',
          apiVersion: obj.apiVersion,
          fieldsType: 'FieldsV1',
          fieldsV1: fieldsV1Of(paths),
        },
      ];
    return this.#commit(res, undefined, obj, dryRun, undefined, 201);
  }

  #apply(
    res: ResourceDef,
    namespace: string | undefined,
    name: string,
    raw: unknown,
    manager: string,
    force: boolean,
    dryRun: boolean,
    sub: string | undefined,
  ): ServerResponse {
    const body = this.#checkBody(res, raw, namespace, name);
    const key = FakeApiServer.key(res, namespace, name);
    const before = this.objects.get(key);
    const rv = body.metadata.resourceVersion;
    if (typeof rv === 'string' && rv && before && before.metadata.resourceVersion !== rv)
      throw this.#conflict(res, name);
    if (!before && sub) throw this.#notFound(res, name);
    if (!before) this.#requireNamespace(res, namespace);
    const config = ownedPart(body, res, sub);
    const obj = before ? clone(before) : this.#fresh(res, namespace, name);
    const entries = clone(entriesOf(obj));
    const scope = sub ?? '';
    let mine = entries.find(
      (e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === scope,
    );
    const oldPaths = mine ? pathsOfFieldsV1(mine.fieldsV1) : [];
    const fresh = leavesOf(config);
    const others = entries.filter((e) => e !== mine);
    const owned = new Map(others.map((e) => [e, pathsOfFieldsV1(e.fieldsV1)]));
    const conflicts: { entry: ManagedFieldsEntry; path: Path }[] = [];
    for (const { path, value } of fresh.values()) {
      const current = getAt(obj, path);
      if (current.found && isDeepStrictEqual(current.value, value)) continue;
      for (const [entry, paths] of owned)
        for (const p of paths) if (overlaps(p, path)) conflicts.push({ entry, path: p });
    }
    if (conflicts.length && !force) {
      const list = conflicts.map((c) => `conflict with "${c.entry.manager}": .${c.path.join('.')}`);
      throw new HttpError(
        409,
        'Conflict',
        `Apply failed with ${conflicts.length} conflicts: ${list.join('\n')}`,
      );
    }
    for (const c of conflicts)
      owned.set(
        c.entry,
        owned.get(c.entry)!.filter((p) => !isDeepStrictEqual(p, c.path)),
      );
    const freshKeys = new Set(fresh.keys());
    for (const p of oldPaths) {
      if (freshKeys.has(pathKey(p))) continue;
      const shared = [...owned.values()].some((paths) => paths.some((q) => overlaps(p, q)));
      if (!shared) deleteAt(obj as unknown as Record<string, unknown>, p);
    }
    for (const { path, value } of fresh.values())
      setAt(obj as unknown as Record<string, unknown>, path, clone(value));
    if (!mine) {
      mine = {
        manager,
        operation: 'Apply',
        apiVersion: apiVersionOf(res),
        fieldsType: 'FieldsV1',
        fieldsV1: {},
      };
      if (sub) mine.subresource = sub;
      entries.push(mine);
    }
    mine.fieldsV1 = fieldsV1Of([...fresh.values()].map((l) => l.path));
    for (const [entry, paths] of owned) entry.fieldsV1 = fieldsV1Of(paths);
    obj.metadata.managedFields = entries.filter((e) => pathsOfFieldsV1(e.fieldsV1).length > 0);
    return this.#commit(res, before, obj, dryRun, sub, before ? 200 : 201);
  }

  /** A merge or JSON patch: an Update by `manager`, who takes the fields it changed. */
  #update(
    res: ResourceDef,
    before: Obj,
    after: Obj,
    manager: string,
    sub: string | undefined,
    dryRun: boolean,
    managedFieldsGiven: boolean,
  ): ServerResponse {
    if (!managedFieldsGiven) {
      const was = leavesOf(ownedPart(before as unknown as Record<string, unknown>, res, sub));
      const is = leavesOf(ownedPart(after as unknown as Record<string, unknown>, res, sub));
      const changed: Path[] = [];
      const removed: Path[] = [];
      for (const [k, l] of is)
        if (!was.has(k) || !isDeepStrictEqual(was.get(k)!.value, l.value)) changed.push(l.path);
      for (const [k, l] of was) if (!is.has(k)) removed.push(l.path);
      const entries = clone(entriesOf(before));
      let mine = entries.find(
        (e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (sub ?? ''),
      );
      for (const e of entries) {
        if (e === mine) continue;
        const kept = pathsOfFieldsV1(e.fieldsV1).filter(
          (p) => !changed.some((c) => overlaps(p, c)) && !removed.some((r) => overlaps(p, r)),
        );
        e.fieldsV1 = fieldsV1Of(kept);
      }
      if (changed.length) {
        if (!mine) {
          mine = {
            manager,
            operation: 'Update',
            apiVersion: apiVersionOf(res),
            fieldsType: 'FieldsV1',
            fieldsV1: {},
          };
          if (sub) mine.subresource = sub;
          entries.push(mine);
        }
        const paths = pathsOfFieldsV1(mine.fieldsV1).filter(
          (p) => !removed.some((r) => overlaps(p, r)) && !changed.some((c) => overlaps(p, c)),
        );
        mine.fieldsV1 = fieldsV1Of([...paths, ...changed]);
      } else if (mine) {
        mine.fieldsV1 = fieldsV1Of(
          pathsOfFieldsV1(mine.fieldsV1).filter((p) => !removed.some((r) => overlaps(p, r))),
        );
      }
      after.metadata.managedFields = entries.filter((e) => pathsOfFieldsV1(e.fieldsV1).length > 0);
    } else if (!Array.isArray(after.metadata.managedFields)) {
      throw new HttpError(422, 'Invalid', 'metadata.managedFields: Invalid value: must be a list');
    }
    return this.#commit(res, before, after, dryRun, sub, 200);
  }

  /** Server rules on top of what a write asks for, then validation and storage. */
  #commit(
    res: ResourceDef,
    before: Obj | undefined,
    proposed: Obj,
    dryRun: boolean,
    sub: string | undefined,
    code: number,
  ): ServerResponse {
    let after = proposed;
    const now = kubeTime(this.#now());
    if (before) {
      if (sub === 'status') {
        const status = after.status;
        const managedFields = after.metadata.managedFields;
        after = clone(before);
        if (status === undefined) delete after.status;
        else after.status = status;
        after.metadata.managedFields = managedFields;
      } else if (res.statusSubresource) {
        if (before.status === undefined) delete after.status;
        else after.status = clone(before.status);
      }
      for (const k of SERVER_METADATA) {
        if (k === 'managedFields') continue;
        if (before.metadata[k] === undefined) delete after.metadata[k];
        else after.metadata[k] = before.metadata[k];
      }
      const had = new Set(before.metadata.finalizers ?? []);
      if (before.metadata.deletionTimestamp && (after.metadata.finalizers ?? []).some((f) => !had.has(f)))
        throw new HttpError(
          422,
          'Forbidden',
          `${res.kind} "${before.metadata.name}": no new finalizers can be added if the object is being deleted`,
        );
    } else {
      after.metadata.uid = dryRun ? '' : `uid-${++this.#uid}`;
      after.metadata.creationTimestamp = now;
      after.metadata.generation = 1;
      if (res.statusSubresource && sub !== 'status') delete after.status;
    }
    if (Array.isArray(after.metadata.finalizers) && after.metadata.finalizers.length === 0)
      delete after.metadata.finalizers;
    this.#defaults(after, before, dryRun);
    validate(after, before);
    if (before && specChanged(before, after))
      after.metadata.generation = (before.metadata.generation ?? 0) + 1;
    if (sub !== 'status') this.#controllers(after);
    if (before && isDeepStrictEqual(before, after)) return ok(before, 200);
    if (dryRun) {
      if (!before) delete after.metadata.resourceVersion;
      return ok(after, code);
    }
    if (after.metadata.deletionTimestamp && !after.metadata.finalizers?.length) {
      this.#remove(res, after, before);
      return ok(after, 200);
    }
    this.#store(res, after, before);
    return ok(after, code);
  }

  #defaults(obj: Obj, before: Obj | undefined, dryRun: boolean): void {
    const spec = isObj(obj.spec) ? obj.spec : undefined;
    if (obj.kind === 'Service' && spec) {
      spec.type ??= 'ClusterIP';
      const was = isObj(before?.spec) ? before.spec.clusterIP : undefined;
      if (spec.clusterIP === undefined) {
        if (was !== undefined) spec.clusterIP = was;
        else spec.clusterIP = `10.96.${Math.floor((this.#ip + 1) / 250)}.${((this.#ip + 1) % 250) + 1}`;
        if (was === undefined && !dryRun) this.#ip++;
      }
      if (Array.isArray(spec.ports))
        spec.ports = spec.ports.map((p) => (isObj(p) ? { protocol: 'TCP', targetPort: p.port, ...p } : p));
    }
    if (obj.kind === 'Deployment' && spec) spec.replicas ??= 1;
  }

  /** The controllers a real cluster runs, reduced to their outcome: every rollout is done at once. */
  #controllers(obj: Obj): void {
    if (obj.kind === 'Namespace' && !obj.metadata.deletionTimestamp) obj.status = { phase: 'Active' };
    if (obj.kind === 'Deployment') {
      const spec = isObj(obj.spec) ? obj.spec : {};
      const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
      obj.status = {
        observedGeneration: obj.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
          },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'NewReplicaSetAvailable',
            message: 'ReplicaSet has successfully progressed.',
          },
        ],
      };
    }
  }

  #delete(res: ResourceDef, key: string, name: string): ServerResponse {
    const before = this.objects.get(key);
    if (!before) throw this.#notFound(res, name);
    if (before.metadata.finalizers?.length) {
      if (before.metadata.deletionTimestamp) return ok(before);
      const after = clone(before);
      after.metadata.deletionTimestamp = kubeTime(this.#now());
      after.metadata.generation = (before.metadata.generation ?? 0) + 1;
      this.#store(res, after, before);
      return ok(after);
    }
    this.#remove(res, clone(before), before);
    return ok({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, kind: res.plural },
    });
  }

  #store(res: ResourceDef, obj: Obj, before: Obj | undefined): void {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(FakeApiServer.key(res, obj.metadata.namespace, obj.metadata.name ?? ''), obj);
    this.#emit(res, before ? 'MODIFIED' : 'ADDED', obj, before);
  }

  #remove(res: ResourceDef, obj: Obj, before: Obj | undefined): void {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.objects.delete(FakeApiServer.key(res, obj.metadata.namespace, obj.metadata.name ?? ''));
    this.#emit(res, 'DELETED', obj, before);
  }

  #emit(res: ResourceDef, type: EventType, object: Obj, old: Obj | undefined): void {
    const rv = this.#rv;
    const log = this.#log.get(res) ?? [];
    this.#log.set(res, log);
    // Stored objects are never changed in place (every write stores a new one), so the log shares them.
    log.push({ rv, type, object, old });
    while (log.length > this.watchWindow) this.#compacted.set(res, log.shift()!.rv);
    for (const w of [...this.#watchers]) if (w.res === res) this.#deliver(w, { rv, type, object, old });
    this.onChange?.({ type, res, object, old });
  }

  #deliver(w: Watcher, ev: StoredEvent): void {
    const inScope = (o: Obj | undefined) =>
      !!o &&
      (w.namespace === undefined || o.metadata.namespace === w.namespace) &&
      w.selector(o.metadata.labels);
    const now = inScope(ev.object);
    const was = ev.type === 'ADDED' ? false : ev.old ? inScope(ev.old) : now;
    let type: EventType | undefined;
    if (ev.type === 'DELETED') type = was || now ? 'DELETED' : undefined;
    else if (now) type = was ? ev.type : 'ADDED';
    else if (was) type = 'DELETED';
    if (type) w.send(type, ev.object);
  }

  /**
   * Opens a watch. Returns undefined when `resourceVersion` is older than the window (410 Gone);
   * otherwise the events after it are sent at once, then every new one, until `cancel`.
   */
  watch(path: string, send: WatchSend): { cancel(): void } | { error: ServerResponse } {
    let target: Route;
    let selector: Selector;
    const url = new URL(path, 'http://fake-apiserver');
    try {
      target = this.#route(url.pathname);
      selector = parseSelector(url.searchParams.get('labelSelector'));
      if (target.name !== undefined)
        throw new HttpError(400, 'BadRequest', 'watch of a single object is not supported here');
    } catch (err) {
      if (err instanceof HttpError)
        return { error: { statusCode: err.code, body: statusBody(err.code, err.reason, err.message) } };
      throw err;
    }
    const { res, namespace } = target;
    const from = url.searchParams.get('resourceVersion');
    const watcher: Watcher = { res, namespace, selector, send };
    if (from && from !== '0') {
      const rv = Number(from);
      if (!Number.isInteger(rv) || rv < (this.#compacted.get(res) ?? 0))
        return {
          error: errorResponse(
            410,
            'Expired',
            `too old resource version: ${from} (${this.#compacted.get(res)})`,
          ),
        };
      for (const ev of this.#log.get(res) ?? []) if (ev.rv > rv) this.#deliver(watcher, ev);
    } else {
      for (const obj of this.list(res, namespace, selector)) send('ADDED', obj);
    }
    this.#watchers.add(watcher);
    return { cancel: () => this.#watchers.delete(watcher) };
  }

  /** The stored object a request path names, if any. */
  objectAt(path: string): Obj | undefined {
    try {
      const { res, namespace, name } = this.#route(new URL(path, 'http://fake-apiserver').pathname);
      return name === undefined ? undefined : this.objects.get(FakeApiServer.key(res, namespace, name));
    } catch {
      return undefined;
    }
  }

  /** Whether `path` asks for a watch (`?watch=1`). */
  static isWatch(path: string): boolean {
    const q = new URL(path, 'http://fake-apiserver').searchParams.get('watch');
    return q === '1' || q === 'true';
  }

  get watcherCount(): number {
    return this.#watchers.size;
  }
}

function specChanged(before: Obj, after: Obj): boolean {
  const strip = (o: Obj) => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !isDeepStrictEqual(strip(before), strip(after));
}

// ---------------------------------------------------------------------------------------------

/**
 * The `ApiTransport` of a unit test: every request goes straight to the in-memory API server, with
 * no faults and no latency, so a step under test sees one consistent API server and its test needs
 * no timers. `requests` lists what was sent (method and path), for tests that care which calls a
 * step makes; `fail` answers chosen requests with an error instead.
 */
export class FakeApiTransport implements ApiTransport {
  readonly server: FakeApiServer;
  readonly requests: string[] = [];
  /** Answers a request itself when it returns a response (an injected failure), else the server does. */
  fail: ((req: TransportRequest) => ServerResponse | undefined) | undefined;

  constructor(server: FakeApiServer) {
    this.server = server;
  }

  send(req: TransportRequest): Promise<TransportResponse> {
    this.requests.push(`${req.method} ${req.path}`);
    const failed = this.fail?.(req);
    if (failed) return Promise.resolve(failed);
    return Promise.resolve(
      this.server.handle({ method: req.method, path: req.path, headers: req.headers, body: req.body }),
    );
  }

  async openStream(req: TransportRequest): Promise<TransportStream> {
    this.requests.push(`WATCH ${req.path}`);
    if (!FakeApiServer.isWatch(req.path))
      throw new Error(`${req.path}: only watches are streamed by the fake`);
    const body = new PassThrough();
    const opened = this.server.watch(req.path, (type, object) => {
      body.write(`${JSON.stringify({ type, object })}\n`);
    });
    if ('error' in opened)
      return { statusCode: opened.error.statusCode, body: Readable.from([Buffer.from(opened.error.body)]) };
    const close = () => {
      opened.cancel();
      body.end();
    };
    if (req.signal?.aborted) close();
    req.signal?.addEventListener('abort', close, { once: true });
    return { statusCode: 200, body };
  }

  close(): void {}
}
