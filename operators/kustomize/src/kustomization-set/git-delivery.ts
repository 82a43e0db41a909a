// Delivery mode git: instead of making members on this cluster, a set commits each element's
// member to a fleet repository as <path>/<set name>.yaml, for the Mooring agent on that cluster
// (started by `mooring bootstrap git` at that folder) to apply locally. One clone per pass, one
// commit per pass that changes something, pushed with the GitRepository's own credentials.
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import {
  DEFAULT_FLEET_PATH,
  type GitRepository,
  KUSTOMIZATION_SET_ANNOTATION,
  KUSTOMIZATION_SET_NAME_LABEL,
  KUSTOMIZATION_SET_REVISION_ANNOTATION,
  type KustomizationSetSpec,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  type GitAuth,
  GitAuthError,
  type GitClient,
  GitError,
  gitAuthFromSecret,
  InvalidGitCredentialsError,
  PushRejectedError,
} from '@mooring/git';
import {
  type KubeClient,
  parseDuration,
  RetryableError,
  readSecretData,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { parse, stringify } from 'yaml';
import type { MemberObject } from './member-kinds.ts';
import type { LiveState } from './plan-rollout.ts';
import type { RenderedMember } from './render-members.ts';
import { renderString, TemplateError } from './template.ts';

const DEFAULT_GIT_TIMEOUT_MS = 60_000;

/** The set's clone of its fleet repository for one pass, and what the pass changed in it. */
export interface FleetCheckout {
  dir: string;
  url: string;
  branch: string;
  opts: { auth: GitAuth | undefined; timeoutMs: number; signal: AbortSignal };
  /** The branch's head when cloned. */
  head: string;
  /** The member files this set wrote before, by member name: path in the repository and revision. */
  files: Map<string, { path: string; revision: string | undefined }>;
  /** Each rendered member's file path, by member name. */
  paths: Map<string, string>;
  written: string[];
  removed: string[];
  /** The commit this pass pushed, if it changed anything. */
  commit?: string;
  /** Ends the pass: the clone is removed. */
  close(): Promise<void>;
}

/** What a git-mode reconcile needs of the set, kept apart from the steps' run. */
export interface FleetSet {
  namespace: string;
  name: string;
  delivery: NonNullable<KustomizationSetSpec['delivery']>;
}

/** A Git failure as a reconcile error; @mooring/git has already taken credentials out of the message. */
function gitFailure(err: unknown): Error {
  if (err instanceof GitAuthError) return new RetryableError(Reason.AuthenticationFailed, err.message);
  if (err instanceof PushRejectedError)
    return new RetryableError(
      Reason.GitOperationFailed,
      `${err.message}: the branch moved; the next pass clones it again`,
    );
  if (err instanceof GitError) return new RetryableError(Reason.GitOperationFailed, err.message);
  return err as Error;
}

const memberFile = (set: FleetSet, folder: string) => `${folder}/${set.name}.yaml`;

/** Each member's folder from delivery.path, checked to stay inside the repository. */
export function fleetPaths(set: FleetSet, rendered: readonly RenderedMember[]): Map<string, string> {
  const template = set.delivery.path ?? DEFAULT_FLEET_PATH;
  const paths = new Map<string, string>();
  for (const m of rendered) {
    const folder = normalize(String(renderString(template, m.element.params))).replace(/\/+$/, '');
    if (!folder || folder === '.' || folder.startsWith('/') || folder.split('/').includes('..'))
      throw new TemplateError(
        `delivery.path renders to ${JSON.stringify(folder)} for ${m.name}: it must be a folder inside the repository`,
      );
    paths.set(m.kustomization, memberFile(set, folder));
  }
  return paths;
}

async function* yamlFiles(root: string, base: string, dir = root): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* yamlFiles(root, base, full);
    else if (entry.name === base) yield relative(root, full);
  }
}

/** The files this set wrote: named after it, and saying so in their set annotation. */
async function scanFiles(dir: string, set: FleetSet): Promise<FleetCheckout['files']> {
  const files: FleetCheckout['files'] = new Map();
  const owner = `${set.namespace}/${set.name}`;
  for await (const path of yamlFiles(dir, `${set.name}.yaml`)) {
    let obj: MemberObject | undefined;
    try {
      obj = parse(await readFile(join(dir, path), 'utf8')) as MemberObject;
    } catch {
      continue; // Not one of ours: ours always parse.
    }
    if (obj?.metadata?.annotations?.[KUSTOMIZATION_SET_ANNOTATION] !== owner || !obj.metadata.name) continue;
    files.set(obj.metadata.name, {
      path,
      revision: obj.metadata.annotations?.[KUSTOMIZATION_SET_REVISION_ANNOTATION],
    });
  }
  return files;
}

/**
 * Clones the fleet repository's branch (the GitRepository's URL and credentials) into a scratch
 * folder the caller removes, and reads the member files this set wrote there before. `deadline`
 * is the reconcile's (`ReconcileContext.deadline`): the pass's Git operations share one of three
 * times the repository's timeout.
 */
export async function openFleet(
  deps: { client: KubeClient; git: GitClient },
  set: FleetSet,
  rendered: readonly RenderedMember[],
  deadline: (ms: number) => AbortSignal,
): Promise<FleetCheckout> {
  const ref = set.delivery.gitRepositoryRef;
  if (!ref)
    throw new StalledError(
      Reason.InvalidSourceConfiguration,
      'delivery mode git needs delivery.gitRepositoryRef: the fleet repository to commit to',
    );
  const paths = fleetPaths(set, rendered);
  const repo = await deps.client.getOrUndefined<GitRepository>({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    namespace: set.namespace,
    name: ref.name,
  });
  if (!repo)
    throw new WaitingError(
      Reason.DependencyNotReady,
      `GitRepository ${set.namespace}/${ref.name} not found`,
      30_000,
    );
  let auth: GitAuth | undefined;
  if (repo.spec.secretRef?.name) {
    const data = await readSecretData(
      deps.client,
      set.namespace,
      repo.spec.secretRef.name,
      'Git credentials',
    );
    try {
      auth = gitAuthFromSecret(data, repo.spec.url, repo.spec.secretRef.name);
    } catch (err) {
      if (err instanceof InvalidGitCredentialsError)
        throw new StalledError(Reason.InvalidSourceConfiguration, err.message);
      throw err;
    }
  }
  const branch = set.delivery.branch || repo.spec.ref?.branch || 'master';
  const timeoutMs = repo.spec.timeout ? parseDuration(repo.spec.timeout) : DEFAULT_GIT_TIMEOUT_MS;
  const dir = await mkdtemp(join(tmpdir(), 'mooring-fleet-'));
  const opts = { auth, timeoutMs, signal: deadline(timeoutMs * 3) };
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    const checkout = await deps.git.cloneForWrite(repo.spec.url, branch, dir, opts);
    return {
      close,
      dir,
      url: repo.spec.url,
      branch,
      opts,
      head: checkout.head.commit,
      files: await scanFiles(dir, set),
      paths,
      written: [],
      removed: [],
    };
  } catch (err) {
    await close();
    throw gitFailure(err);
  }
}

/**
 * The member as its agent applies it: no spec.kubeConfig (the agent applies to its own cluster),
 * the set's labels and annotations, and keys sorted so the same input writes the same bytes.
 */
export function memberYaml(set: FleetSet, m: RenderedMember, apiVersion: string, kind: string): string {
  const { kubeConfig: _remote, ...spec } = m.spec;
  const obj = {
    apiVersion,
    kind,
    metadata: {
      name: m.kustomization,
      namespace: set.namespace,
      labels: { ...m.labels, [KUSTOMIZATION_SET_NAME_LABEL]: set.name },
      annotations: {
        ...m.annotations,
        [KUSTOMIZATION_SET_REVISION_ANNOTATION]: m.revision,
        [KUSTOMIZATION_SET_ANNOTATION]: `${set.namespace}/${set.name}`,
      },
    },
    spec,
  };
  return `# Written by KustomizationSet ${set.namespace}/${set.name}; changes made here are overwritten.\n${stringify(obj, { sortMapEntries: true })}`;
}

/** Writes one member's file (moving it when its folder changed); records it when the bytes differ. */
export async function writeMemberFile(fleet: FleetCheckout, name: string, content: string): Promise<void> {
  const path = fleet.paths.get(name)!;
  const before = fleet.files.get(name);
  if (before && before.path !== path) {
    await unlink(join(fleet.dir, before.path));
    fleet.removed.push(before.path);
  }
  const full = join(fleet.dir, path);
  const old = await readFile(full, 'utf8').catch(() => undefined);
  if (old === content) return;
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, content);
  fleet.written.push(path);
}

/** Removes the files of members whose element is gone; an agent prunes what they applied. */
export async function removeMemberFiles(
  fleet: FleetCheckout,
  wanted: ReadonlySet<string>,
): Promise<string[]> {
  const gone: string[] = [];
  for (const [name, file] of fleet.files) {
    if (wanted.has(name)) continue;
    await unlink(join(fleet.dir, file.path)).catch(() => {});
    fleet.removed.push(file.path);
    gone.push(name);
  }
  return gone;
}

/** One commit for the pass, pushed; nothing when no file changed. */
export async function commitFleet(
  git: GitClient,
  set: FleetSet,
  fleet: FleetCheckout,
): Promise<string | undefined> {
  if (!fleet.written.length && !fleet.removed.length) return undefined;
  const parts = [
    fleet.written.length ? `write ${fleet.written.join(', ')}` : '',
    fleet.removed.length ? `remove ${fleet.removed.join(', ')}` : '',
  ].filter(Boolean);
  const author = set.delivery.author ?? {};
  try {
    const commit = await git.commit(
      fleet.dir,
      `KustomizationSet ${set.namespace}/${set.name}: ${parts.join('; ')}`,
      { name: author.name || 'Mooring', email: author.email || 'mooring@localhost' },
      {},
    );
    if (!commit) return undefined;
    await git.push(fleet.dir, fleet.url, `HEAD:refs/heads/${fleet.branch}`, fleet.opts);
    fleet.commit = commit;
    return commit;
  } catch (err) {
    throw gitFailure(err);
  }
}

/** A committed member as the planner sees it, from its file and, when readable, its agent's object. */
export function committedState(
  fileRevision: string | undefined,
  agent: { obj: MemberObject | undefined; liveState: (o: MemberObject) => LiveState } | undefined,
): LiveState | undefined {
  if (fileRevision === undefined) return undefined;
  const state: LiveState = { revision: fileRevision, generation: 0, ready: undefined };
  if (!agent?.obj) return state;
  const live = agent.liveState(agent.obj);
  // The agent's object speaks of this file only once it holds the same revision.
  if (live.revision !== fileRevision) return state;
  return { ...live, revision: fileRevision };
}
