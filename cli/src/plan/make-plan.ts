// `mooring plan`: both revisions checked out, every Kustomization and HelmRelease that reads this
// repository found in them, those the change can touch rendered at both, and the difference
// reported per applier with its deletion budget. One applier's failure is its own entry; the
// others are still planned.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { HelmRelease, Kustomization } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { CliError } from '../cli-error.ts';
import { type DeclaredApplier, type DeclaredObjects, declaredObjects, sourceOf } from './declared-objects.ts';
import { type BudgetCheck, checkBudget } from './deletion-budget.ts';
import { changedFiles, checkOut, remoteUrls, resolveCommit } from './git-revisions.ts';
import { kustomizationInputs, specFolder, touches } from './kustomization-inputs.ts';
import { compareRenders, type ObjectChange } from './object-changes.ts';
import { helmReleaseInputs, renderHelmOffline } from './render-helm-offline.ts';
import { type ClusterInputs, type OfflineRender, renderOffline } from './render-offline.ts';
import { repoMatcher } from './repo-match.ts';

export interface PlanOptions {
  repo: string;
  base: string;
  head: string;
  /** Only appliers declared in files under these folders (all when empty). */
  paths: string[];
  /** `namespace/name` of the GitRepositories that fetch this repository; found from the remotes when empty. */
  sources: string[];
  /** With a cluster: its side of the render (substituteFrom, decryption keys) and a dry-run diff. */
  cluster?: ClusterAccess;
}

/** What a plan asks of a cluster when it has one; `cli/src/plan/live-plan.ts` implements it. */
export interface ClusterAccess {
  inputsOf(ks: Kustomization): Promise<ClusterInputs>;
  dryRun(applier: DeclaredApplier, objects: KubeObject[]): Promise<LiveResult>;
}

export interface LiveResult {
  changes: { id: string; change: string; patch: string }[];
  error?: string;
}

export interface ApplierPlan {
  kind: 'Kustomization' | 'HelmRelease';
  namespace: string;
  name: string;
  /** The file that declares it at head (at base when head removed it). */
  file: string;
  /** `added`/`removed`: the applier itself is new or gone at head. */
  lifecycle: 'added' | 'removed' | 'kept';
  changes: ObjectChange[];
  counts: { added: number; changed: number; deleted: number };
  prune: boolean;
  budget?: BudgetCheck;
  /** The head render's failure: what the operator would report, with nothing applied. */
  error?: string;
  /** The base render's failure, when only the base failed (every head object then counts as added). */
  baseError?: string;
  notes: string[];
  live?: LiveResult;
}

export interface Plan {
  repo: string;
  base: { ref: string; sha: string };
  head: { ref: string; sha: string };
  /** How the repository's GitRepositories were recognised. */
  source: string;
  changedFiles: string[];
  appliers: ApplierPlan[];
  /** Appliers of this repository the change cannot touch: not rendered. */
  unaffected: string[];
  /** Appliers that read another source. */
  otherSources: string[];
  unreadable: { file: string; error: string }[];
}

const label = (a: DeclaredApplier): string => `${a.kind}/${a.namespace}/${a.name}`;

/** Pairs the two revisions' appliers: by kind/namespace/name, with the file added when a name is declared twice. */
function keyed(list: DeclaredApplier[]): Map<string, DeclaredApplier> {
  const counts = new Map<string, number>();
  for (const a of list) counts.set(label(a), (counts.get(label(a)) ?? 0) + 1);
  return new Map(list.map((a) => [counts.get(label(a))! > 1 ? `${label(a)}@${a.file}` : label(a), a]));
}

function inputsOf(root: string, a: DeclaredApplier): string[] {
  return a.kind === 'Kustomization'
    ? kustomizationInputs(root, specFolder(a.object.spec.path))
    : helmReleaseInputs(a.object);
}

async function render(root: string, a: DeclaredApplier, cluster?: ClusterAccess): Promise<OfflineRender> {
  if (a.kind === 'HelmRelease') return renderHelmOffline(root, a.object as unknown as HelmRelease);
  const ks = a.object as unknown as Kustomization;
  const folder = specFolder(ks.spec.path);
  if (!existsSync(join(root, folder)))
    return { error: `path '${ks.spec.path ?? './'}' does not exist in the revision`, notes: [] };
  let inputs: ClusterInputs = {};
  const notes: string[] = [];
  if (cluster)
    inputs = await cluster.inputsOf(ks).catch((err: Error) => {
      notes.push(`cluster inputs not read (${err.message}): rendered with what Git holds`);
      return {};
    });
  const r = await renderOffline(root, ks, inputs);
  return { ...r, notes: [...notes, ...r.notes] };
}

const dedupe = (xs: string[]): string[] => [...new Set(xs)];

async function planOne(
  roots: { base: string; head: string },
  before: DeclaredApplier | undefined,
  after: DeclaredApplier | undefined,
  cluster: ClusterAccess | undefined,
): Promise<ApplierPlan> {
  const a = (after ?? before)!;
  const [baseR, headR] = await Promise.all([
    before ? render(roots.base, before, cluster) : Promise.resolve<OfflineRender>({ objects: [], notes: [] }),
    after ? render(roots.head, after, cluster) : Promise.resolve<OfflineRender>({ objects: [], notes: [] }),
  ]);
  const plan: ApplierPlan = {
    kind: a.kind,
    namespace: a.namespace,
    name: a.name,
    file: a.file,
    lifecycle: !before ? 'added' : !after ? 'removed' : 'kept',
    changes: [],
    counts: { added: 0, changed: 0, deleted: 0 },
    // A HelmRelease deletes what its new manifest drops, as Helm does.
    prune: a.kind === 'HelmRelease' || a.object.spec.prune === true,
    notes: dedupe([...headR.notes, ...baseR.notes]),
  };
  if (headR.error) {
    plan.error = headR.error;
    return plan;
  }
  if (baseR.error) plan.baseError = baseR.error;
  plan.changes = compareRenders(baseR.objects ?? [], headR.objects ?? []);
  for (const c of plan.changes) plan.counts[c.change]++;
  if (plan.prune) plan.budget = checkBudget(a.object.spec, (baseR.objects ?? []).length, plan.counts.deleted);
  if (cluster && after && headR.objects)
    plan.live = await cluster.dryRun(after, structuredClone(headR.objects));
  return plan;
}

function declaredUnder(d: DeclaredObjects, paths: string[]): DeclaredApplier[] {
  if (!paths.length) return d.appliers;
  const prefixes = paths.map(specFolder);
  return d.appliers.filter((a) =>
    prefixes.some((p) => p === '' || a.file === p || a.file.startsWith(`${p}/`)),
  );
}

/** Makes the plan of `head` against `base`; renders run a few at a time. */
export async function makePlan(opts: PlanOptions): Promise<Plan> {
  const [baseSha, headSha] = await Promise.all([
    resolveCommit(opts.repo, opts.base, '--base'),
    resolveCommit(opts.repo, opts.head, '--head'),
  ]);
  const [changed, remotes] = await Promise.all([
    changedFiles(opts.repo, baseSha, headSha),
    remoteUrls(opts.repo),
  ]);
  const baseTree = await checkOut(opts.repo, baseSha);
  try {
    const headTree = await checkOut(opts.repo, headSha);
    try {
      const baseDecl = declaredObjects(baseTree.dir);
      const headDecl = declaredObjects(headTree.dir);
      const matcher = repoMatcher(opts.sources, remotes, [
        ...baseDecl.gitRepositories,
        ...headDecl.gitRepositories,
      ]);
      const ours = (a: DeclaredApplier): boolean => {
        const src = sourceOf(a);
        return !!src && src.kind === 'GitRepository' && matcher.matches(src);
      };
      const baseAll = keyed(declaredUnder(baseDecl, opts.paths));
      const headAll = keyed(declaredUnder(headDecl, opts.paths));
      const plan: Plan = {
        repo: opts.repo,
        base: { ref: opts.base, sha: baseSha },
        head: { ref: opts.head, sha: headSha },
        source: matcher.describe,
        changedFiles: changed,
        appliers: [],
        unaffected: [],
        otherSources: [],
        unreadable: [...headDecl.unreadable],
      };
      const declared = [...baseAll.values(), ...headAll.values()];
      const count = new Set([...baseAll.keys(), ...headAll.keys()]).size;
      // A plan that silently skips everything would read as "no changes": say what to pass instead.
      if (declared.length && !declared.some(ours))
        throw new CliError(
          `none of the ${count} Kustomizations and HelmReleases declared here reads this repository (${matcher.describe}): pass --source <namespace>/<name> for the GitRepository that fetches it.`,
        );
      const work: (() => Promise<ApplierPlan>)[] = [];
      for (const key of new Set([...headAll.keys(), ...baseAll.keys()])) {
        const before = baseAll.get(key);
        const after = headAll.get(key);
        if (!(before && ours(before)) && !(after && ours(after))) {
          plan.otherSources.push(key);
          continue;
        }
        // Be conservative: render unless it is certain the change cannot reach the applier.
        const same = before && after && JSON.stringify(before.object) === JSON.stringify(after.object);
        const reached =
          !same ||
          touches(dedupe([...inputsOf(baseTree.dir, before), ...inputsOf(headTree.dir, after)]), changed);
        if (!reached) {
          plan.unaffected.push(key);
          continue;
        }
        work.push(() =>
          planOne(
            { base: baseTree.dir, head: headTree.dir },
            before && ours(before) ? before : undefined,
            after && ours(after) ? after : undefined,
            opts.cluster,
          ),
        );
      }
      plan.appliers = await inBatches(work, 4);
      return plan;
    } finally {
      headTree.remove();
    }
  } finally {
    baseTree.remove();
  }
}

/** Runs the tasks `width` at a time, keeping their order in the result. */
async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return out;
}

/** The plan's exit code, as terraform's -detailed-exitcode: 0 nothing changes, 2 changes, 1 a render failed. */
export function planExitCode(plan: Plan): 0 | 1 | 2 {
  if (plan.appliers.some((a) => a.error || a.live?.error)) return 1;
  const changes = plan.appliers.some(
    (a) => a.changes.length > 0 || a.lifecycle !== 'kept' || (a.live?.changes.length ?? 0) > 0,
  );
  return changes ? 2 : 0;
}
