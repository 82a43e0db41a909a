/**
 * What one seed simulates, decided up front from the scenario PRNG: the Kustomizations (source,
 * path, interval, wait, dependsOn), and per GitRepository a sequence of revisions whose paths add,
 * remove and change objects, now and then with an object the API server refuses (a Service port
 * above 65535) or with no objects at all.
 */
import type { Manifest } from '@mooring/kustomize-operator/apply/object-policy';
import type { Rng } from './prng.ts';

export const NAMESPACES = ['default', 'team', 'apps'] as const;
export const SOURCE_NAMESPACE = 'default';

export interface KustomizationSpec {
  name: string;
  namespace: string;
  source: string;
  path: string;
  interval: string;
  intervalMs: number;
  wait: boolean;
  dependsOn: { name: string; namespace: string }[];
  deletionPolicy: 'MirrorPrune' | 'Delete' | undefined;
}

export interface PathContent {
  manifests: Manifest[];
  /** Why the API server refuses this content, if it does. */
  invalid: string | undefined;
}

export interface Revision {
  revision: string;
  digest: string;
  paths: Map<string, PathContent>;
}

export interface Scenario {
  sources: string[];
  kustomizations: KustomizationSpec[];
  revisions: Map<string, Revision[]>;
  chaosSteps: number;
  watchWindow: number;
  concurrent: number;
  concurrentApplies: number;
  requeueDependencyMs: number;
}

const INTERVALS: [string, number][] = [
  ['1m', 60_000],
  ['2m', 120_000],
  ['5m', 300_000],
  ['10m', 600_000],
];

type Kind = 'ConfigMap' | 'Secret' | 'Service' | 'Deployment' | 'Namespace';

interface Entry {
  kind: Kind;
  name: string;
  /** Namespaced objects: an explicit namespace, or none (the Kustomization's is used). */
  namespace: string | undefined;
  version: number;
  port: number;
  replicas: number;
}

const ABBREV: Record<Kind, string> = {
  ConfigMap: 'cm',
  Secret: 'secret',
  Service: 'svc',
  Deployment: 'web',
  Namespace: 'ns',
};

function manifest(e: Entry, badPort?: number): Manifest {
  const meta = (extra: object = {}) => ({
    name: e.name,
    ...(e.kind !== 'Namespace' && e.namespace ? { namespace: e.namespace } : {}),
    labels: { app: e.name },
    ...extra,
  });
  switch (e.kind) {
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta(),
        data: { version: `v${e.version}`, ...(e.version % 2 ? { odd: 'true' } : {}) },
      };
    case 'Secret':
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: meta(),
        type: 'Opaque',
        data: { token: Buffer.from(`${e.name}-${e.version}`).toString('base64') },
      };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(),
        spec: { selector: { app: e.name }, ports: [{ name: 'http', port: badPort ?? e.port }] },
      };
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(),
        spec: {
          replicas: e.replicas,
          selector: { matchLabels: { app: e.name } },
          template: {
            metadata: { labels: { app: e.name } },
            spec: { containers: [{ name: 'app', image: `registry.example/${e.name}:1.${e.version}.0` }] },
          },
        },
      };
    case 'Namespace':
      return { apiVersion: 'v1', kind: 'Namespace', metadata: meta() };
  }
}

class PathState {
  readonly #k: string;
  readonly #rng: Rng;
  #counter = 0;
  entries: Entry[] = [];

  constructor(k: string, rng: Rng) {
    this.#k = k;
    this.#rng = rng;
    const n = rng.int(2, 5);
    for (let i = 0; i < n; i++) this.#add();
  }

  #add(kind?: Kind): Entry {
    const rng = this.#rng;
    const k =
      kind ??
      rng.pick<Kind>(['ConfigMap', 'ConfigMap', 'ConfigMap', 'Secret', 'Service', 'Deployment', 'Namespace']);
    const e: Entry = {
      kind: k,
      name: `${this.#k}-${ABBREV[k]}-${this.#counter++}`,
      namespace: k === 'Namespace' ? undefined : rng.chance(0.3) ? 'apps' : undefined,
      version: 1,
      port: rng.int(1, 65535),
      replicas: rng.int(1, 3),
    };
    this.entries.push(e);
    return e;
  }

  /** The next commit of this path: its content, and whether the state carries on from it. */
  next(last: boolean): PathContent {
    const rng = this.#rng;
    if (rng.chance(0.5)) for (let i = rng.int(1, 2); i > 0; i--) this.#add();
    if (this.entries.length > 1 && rng.chance(0.35))
      this.entries.splice(rng.int(0, this.entries.length - 1), 1);
    for (const e of this.entries) {
      if (!rng.chance(0.3)) continue;
      e.version++;
      if (e.kind === 'Service') e.port = rng.int(1, 65535);
      if (e.kind === 'Deployment') e.replicas = rng.int(1, 3);
    }
    if (this.entries.length === 0) this.#add();
    if (!last && rng.chance(0.04)) return { manifests: [], invalid: 'renders no objects' };
    const manifests = this.entries.map((e) => manifest(e));
    if (rng.chance(0.1)) {
      const services = this.entries.filter((e) => e.kind === 'Service');
      const badPort = rng.int(65536, 99999);
      let bad: Entry;
      if (services.length && rng.chance(0.5)) {
        bad = rng.pick(services);
        manifests[this.entries.indexOf(bad)] = manifest(bad, badPort);
      } else {
        bad = this.#add('Service');
        manifests.push(manifest(bad, badPort));
        // Most broken commits are fixed by the next one, which drops or fixes the object.
        if (rng.chance(0.7)) this.entries.pop();
      }
      return { manifests, invalid: `Service ${bad.name} port ${badPort}` };
    }
    return { manifests, invalid: undefined };
  }
}

export function makeScenario(rng: Rng): Scenario {
  const sources = Array.from({ length: rng.int(1, 2) }, (_, i) => `repo-${i}`);
  const count = rng.int(2, 4);
  const kustomizations: KustomizationSpec[] = [];
  for (let i = 0; i < count; i++) {
    const name = `app-${String.fromCharCode(97 + i)}`;
    const [interval, intervalMs] = rng.pick(INTERVALS);
    const dependsOn: KustomizationSpec['dependsOn'] = [];
    if (i > 0 && rng.chance(0.4)) {
      const dep = kustomizations[rng.int(0, i - 1)]!;
      dependsOn.push({ name: dep.name, namespace: dep.namespace });
    }
    kustomizations.push({
      name,
      namespace: rng.chance(0.7) ? 'default' : 'team',
      source: rng.pick(sources),
      path: `./${name}`,
      interval,
      intervalMs,
      wait: rng.chance(0.5),
      dependsOn,
      deletionPolicy: rng.pick([undefined, undefined, 'MirrorPrune', 'Delete'] as const),
    });
  }
  const revisions = new Map<string, Revision[]>();
  for (const source of sources) {
    const paths = kustomizations.filter((k) => k.source === source);
    const states = new Map(paths.map((k) => [k.path, new PathState(k.name, rng)]));
    const n = rng.int(3, 8);
    const list: Revision[] = [];
    let previous: Map<string, PathContent> | undefined;
    for (let r = 0; r < n; r++) {
      const last = r === n - 1;
      const content = new Map<string, PathContent>();
      for (const [path, state] of states) {
        const keep = previous && !last && rng.chance(0.4) && !previous.get(path)!.invalid;
        content.set(path, keep ? previous!.get(path)! : state.next(last));
      }
      list.push({ revision: `main@sha1:${rng.hex(40)}`, digest: `sha256:${rng.hex(64)}`, paths: content });
      previous = content;
    }
    revisions.set(source, list);
  }
  return {
    sources,
    kustomizations,
    revisions,
    chaosSteps: rng.int(50, 140),
    watchWindow: rng.pick([10, 50, 200]),
    concurrent: rng.int(1, 4),
    concurrentApplies: rng.pick([1, 2, 8]),
    requeueDependencyMs: rng.pick([5_000, 30_000]),
  };
}
