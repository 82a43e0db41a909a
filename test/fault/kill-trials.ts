// Seeded kill -9 trials on the real control plane: Git commits a new set of objects for several
// Kustomizations, the kustomize operator (a process of its own) is killed at a random point of
// the apply, and the cluster is checked at the moment of the crash and after a restart.
// Used by kill-during-apply.test.ts (a few trials in `npm test`) and hack/chaos.ts (long runs).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { freePort } from '../../hack/lib/processes.ts';
import { GitServer, type InProcessOperators, startInProcessOperators, uniqueName } from '../harness/index.ts';
import { mulberry32 } from '../simulation/prng.ts';
import { FaultProxy } from './fault-proxy.ts';
import { type OperatorChild, startOperatorChild } from './operator-child.ts';

/** The simulation suite's seeded generator, so a failing trial replays from its seed alone. */
export const seededRandom = mulberry32;

interface KustomizationStatus {
  lastAppliedRevision?: string;
  inventory?: { entries: { id: string }[] };
  conditions?: { type: string; status: string; message: string }[];
}
type KustomizationObject = KubeObject & { status?: KustomizationStatus };

export interface TrialResult {
  seed: number;
  /** Objects applied when the operator died, and of those, how many no inventory listed. */
  appliedAtKill: number;
  orphansAtKill: string[];
  /** From the restart to every Kustomization Ready at the last commit with exactly its objects. */
  convergenceMs: number;
  /** Anything that did not hold after convergence (missing objects, leftovers, wrong inventory). */
  violations: string[];
}

export interface KillTrialsOptions {
  kubeconfig: string;
  client: KubeClient;
  seed: number;
  trials: number;
  kustomizations?: number;
  /** Most ConfigMaps one Kustomization declares. */
  maxObjects?: number;
  /** How long one convergence may take before it counts as a violation (not a speed check). */
  convergenceLimitMs?: number;
  log?: (line: string) => void;
}

const cm = (name: string, trial: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  trial: "${trial}"\n`;

/** One namespace, a Git server, the source operator in this process, the kustomize one as a child. */
export async function runKillTrials(opts: KillTrialsOptions): Promise<TrialResult[]> {
  const { client, kubeconfig } = opts;
  const log = opts.log ?? (() => {});
  const kustomizations = opts.kustomizations ?? 4;
  const maxObjects = opts.maxObjects ?? 24;
  const limitMs = opts.convergenceLimitMs ?? 120_000;
  const ns = uniqueName('chaos');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const git = await GitServer.start();
  const storage = await mkdtemp(join(tmpdir(), 'mooring-chaos-storage-'));
  const storagePort = await freePort();
  const artifacts = await FaultProxy.start(`http://127.0.0.1:${storagePort}`);
  let source: InProcessOperators | undefined;
  let operator: OperatorChild | undefined;
  const results: TrialResult[] = [];
  try {
    source = await startInProcessOperators(
      [sourceOperator()],
      ns,
      [
        '--storage-path',
        storage,
        '--storage-addr',
        `127.0.0.1:${storagePort}`,
        '--storage-adv-addr',
        artifacts.address,
      ],
      { kubeconfig },
    );
    const repo = await git.createRepo('platform');
    const names = Array.from({ length: kustomizations }, (_, i) => `app-${i}`);
    // What Git declares for each Kustomization: ConfigMap names.
    const declared = new Map(names.map((n) => [n, new Set<string>()]));
    const files = (trial: number): Record<string, string | null> => {
      const out: Record<string, string | null> = {};
      for (const [app, set] of declared) {
        // mutate() keeps at least one object per Kustomization, so the list is never empty.
        out[`${app}/kustomization.yaml`] = `resources:\n${[...set].map((c) => `  - ${c}.yaml`).join('\n')}\n`;
        for (const c of set) out[`${app}/${c}.yaml`] = cm(c, trial);
      }
      return out;
    };
    const mutate = (random: () => number) => {
      for (const [app, set] of declared) {
        for (const c of [...set]) if (random() < 0.3) set.delete(c);
        const add = Math.floor(random() * (maxObjects / 2));
        for (let i = 0; i < add && set.size < maxObjects; i++) {
          set.add(`${app}-cm-${Math.floor(random() * maxObjects * 4)}`);
        }
        if (set.size === 0) set.add(`${app}-cm-0`);
      }
    };
    mutate(seededRandom(opts.seed));
    let commit = await repo.commit(files(0));
    await client.create({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: 'platform', namespace: ns },
      spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
    } as KubeObject);
    for (const app of names) {
      await client.create({
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        metadata: { name: app, namespace: ns },
        spec: {
          interval: '10m',
          prune: true,
          // Trials delete most of a folder at random; the deletion budget is not what they test.
          deletionBudget: '100%',
          path: `./${app}`,
          sourceRef: { kind: 'GitRepository', name: 'platform' },
        },
      } as KubeObject);
    }
    operator = await startOperatorChild(kubeconfig, ns, 'kustomize', ['--concurrent', '4']);
    await converge(client, ns, declared, commit, limitMs);

    for (let trial = 1; trial <= opts.trials; trial++) {
      const seed = opts.seed + trial;
      const random = seededRandom(seed);
      mutate(random);
      commit = await repo.commit(files(trial));
      await requestReconcile(client, ns, 'GitRepository', 'platform');
      await waitFor(async () => (await artifactRevision(client, ns)).endsWith(commit), 60_000);
      // A random point of the apply: the new artifact is there, the operator is at work on it.
      await new Promise((r) => setTimeout(r, Math.floor(random() * 600)));
      await operator.kill();
      const atKill = await checkInventories(client, ns, names);
      operator = await startOperatorChild(kubeconfig, ns, 'kustomize', ['--concurrent', '4']);
      const started = Date.now();
      const violations = await converge(client, ns, declared, commit, limitMs).catch((err: Error) => [
        err.message,
      ]);
      const result: TrialResult = {
        seed,
        appliedAtKill: atKill.applied,
        orphansAtKill: atKill.orphans,
        convergenceMs: Date.now() - started,
        violations,
      };
      results.push(result);
      log(
        `trial ${trial} seed ${seed}: ${atKill.applied} objects applied at the kill, ${atKill.orphans.length} orphans, converged in ${result.convergenceMs} ms, ${violations.length} violations`,
      );
    }

    // Deletion with a kill in the middle: everything applied goes, and no finalizer is left.
    for (const app of names) {
      await client.delete({
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        namespace: ns,
        name: app,
      });
    }
    await new Promise((r) => setTimeout(r, Math.floor(seededRandom(opts.seed - 1)() * 300)));
    await operator.kill();
    operator = await startOperatorChild(kubeconfig, ns, 'kustomize');
    const started = Date.now();
    const leftovers: string[] = [];
    await waitFor(async () => {
      const ks = (
        await client.list<KustomizationObject>(KUSTOMIZE_API_VERSION, 'Kustomization', { namespace: ns })
      ).items;
      const objs = await labelled(client, ns);
      leftovers.length = 0;
      leftovers.push(
        ...ks.map((k) => `Kustomization ${k.metadata.name} (finalizers ${k.metadata.finalizers?.join(',')})`),
      );
      leftovers.push(...objs.map((o) => `ConfigMap ${o.metadata.name}`));
      return leftovers.length === 0;
    }, limitMs).catch(() => {});
    results.push({
      seed: opts.seed - 1,
      appliedAtKill: 0,
      orphansAtKill: [],
      convergenceMs: Date.now() - started,
      violations: leftovers.map((l) => `left after deleting every Kustomization: ${l}`),
    });
    log(`deletion with a kill: ${leftovers.length} leftovers, done in ${Date.now() - started} ms`);
    return results;
  } finally {
    await operator?.kill();
    await source?.stop();
    await artifacts.close();
    await git.close();
    await rm(storage, { recursive: true, force: true });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
  }
}

async function artifactRevision(client: KubeClient, ns: string): Promise<string> {
  const repo = await client.get<KubeObject & { status?: { artifact?: { revision?: string } } }>({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    namespace: ns,
    name: 'platform',
  });
  return repo.status?.artifact?.revision ?? '';
}

export async function requestReconcile(
  client: KubeClient,
  ns: string,
  kind: string,
  name: string,
): Promise<void> {
  await client.mergePatch(
    {
      apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : SOURCE_API_VERSION,
      kind,
      namespace: ns,
      name,
    },
    { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}-${Math.random()}` } } },
  );
}

/** Polls `check` until it holds; rejects after `limitMs` (a hang, not a speed bound). */
export async function waitFor(check: () => Promise<boolean>, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`not reached within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function labelled(client: KubeClient, ns: string): Promise<KubeObject[]> {
  const list = await client.list<KubeObject>('v1', 'ConfigMap', {
    namespace: ns,
    labelSelector: `${KUSTOMIZE_NAMESPACE_LABEL}=${ns}`,
  });
  return list.items;
}

/** At any moment: every object carrying a Kustomization's labels is in that Kustomization's stored inventory. */
async function checkInventories(
  client: KubeClient,
  ns: string,
  names: string[],
): Promise<{ applied: number; orphans: string[] }> {
  const objects = await labelled(client, ns);
  const inventories = new Map<string, Set<string>>();
  for (const name of names) {
    const k = await client.get<KustomizationObject>({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      namespace: ns,
      name,
    });
    inventories.set(name, new Set((k.status?.inventory?.entries ?? []).map((e) => e.id)));
  }
  const orphans = objects
    .filter((o) => {
      const owner = o.metadata.labels?.[KUSTOMIZE_NAME_LABEL] ?? '';
      return !inventories.get(owner)?.has(`${ns}_${o.metadata.name}__ConfigMap`);
    })
    .map((o) => `${o.metadata.labels?.[KUSTOMIZE_NAME_LABEL]}/${o.metadata.name}`);
  return { applied: objects.length, orphans };
}

/**
 * Waits until every Kustomization is Ready at `commit`, its inventory is exactly what Git declares
 * and the cluster holds exactly those objects; returns what still disagrees if the limit passes.
 */
async function converge(
  client: KubeClient,
  ns: string,
  declared: Map<string, Set<string>>,
  commit: string,
  limitMs: number,
): Promise<string[]> {
  let problems: string[] = [];
  const check = async () => {
    problems = [];
    const objects = new Set((await labelled(client, ns)).map((o) => o.metadata.name ?? ''));
    const want = new Set<string>();
    for (const [app, set] of declared) {
      const k = await client.get<KustomizationObject>({
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        namespace: ns,
        name: app,
      });
      const ready = k.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'True' || !k.status?.lastAppliedRevision?.endsWith(commit)) {
        problems.push(`${app}: not Ready at ${commit.slice(0, 8)} (${ready?.status}: ${ready?.message})`);
      }
      const inventory = new Set((k.status?.inventory?.entries ?? []).map((e) => e.id.split('_')[1] ?? ''));
      for (const c of set) {
        want.add(c);
        if (!inventory.has(c)) problems.push(`${app}: ${c} missing from the inventory`);
      }
      for (const c of inventory)
        if (!set.has(c)) problems.push(`${app}: ${c} in the inventory but not in Git`);
    }
    for (const c of want)
      if (!objects.has(c)) problems.push(`ConfigMap ${c} declared but not on the cluster`);
    for (const c of objects) if (!want.has(c)) problems.push(`ConfigMap ${c} on the cluster but not in Git`);
    return problems.length === 0;
  };
  await waitFor(check, limitMs).catch(() => {});
  return problems;
}
