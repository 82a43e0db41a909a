import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix, resolve, sep } from 'node:path';
import type { Artifact, GitRepository, GitRepositoryInclude } from '@mooring/api';
import { SOURCE_API_VERSION } from '@mooring/api';
import { type ArtifactStorage, extractTarGz } from '@mooring/artifact';
import { type KubeClient, RetryableError, StalledError } from '@mooring/runtime';

/** An include that resolved to an artifact, in spec order. */
export interface ResolvedInclude {
  include: GitRepositoryInclude;
  artifact: Artifact;
}

/** Finds the artifact of every included GitRepository; one not ready yet is retried. */
export async function resolveIncludes(
  client: KubeClient,
  namespace: string,
  self: string,
  includes: GitRepositoryInclude[],
): Promise<ResolvedInclude[]> {
  const out: ResolvedInclude[] = [];
  for (const include of includes) {
    const name = include.repository.name;
    if (name === self) throw new StalledError('IncludeUnavailable', 'a GitRepository cannot include itself');
    const repo = await client.getOrUndefined<GitRepository>({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      namespace,
      name,
    });
    const artifact = repo?.status?.artifact;
    if (!artifact) {
      throw new RetryableError(
        'IncludeUnavailable',
        repo
          ? `included GitRepository ${name} has no artifact yet`
          : `included GitRepository ${name} not found`,
      );
    }
    out.push({ include, artifact });
  }
  return out;
}

/** A relative path that stays inside its root, or a terminal error naming the field. */
function confinedPath(root: string, rel: string, field: string): string {
  const clean = posix.normalize(rel.replaceAll('\\', '/')).replace(/^\/+/, '');
  const full = resolve(root, clean);
  if (full !== root && !full.startsWith(root + sep)) {
    throw new StalledError('InvalidPath', `${field} '${rel}' leaves the artifact root`);
  }
  return full;
}

/**
 * Copies each included artifact's `fromPath` (all of it by default) into the checkout at `toPath`
 * (the repository's name by default). Artifacts are read from this operator's own storage, digest
 * verified, and extracted with the same limits as any consumer's.
 */
export async function copyIncludes(
  storage: ArtifactStorage,
  storageRoot: string,
  workdir: string,
  includes: ResolvedInclude[],
): Promise<void> {
  for (const { include, artifact } of includes) {
    if (!(await storage.verify({ path: artifact.path, digest: artifact.digest ?? '' }))) {
      throw new RetryableError(
        'IncludeUnavailable',
        `artifact of included GitRepository ${include.repository.name} is missing or corrupt in storage`,
      );
    }
    const scratch = await mkdtemp(join(tmpdir(), 'mooring-include-'));
    try {
      await extractTarGz(confinedPath(storageRoot, artifact.path, 'artifact path'), scratch, {});
      const from = confinedPath(scratch, include.fromPath ?? '.', 'include.fromPath');
      const to = confinedPath(workdir, include.toPath ?? include.repository.name, 'include.toPath');
      if (to === workdir)
        throw new StalledError('InvalidPath', 'include.toPath must not be the artifact root');
      const found = await stat(from).catch(() => undefined);
      if (!found) {
        throw new StalledError(
          'IncludeUnavailable',
          `include.fromPath '${include.fromPath}' does not exist in GitRepository ${include.repository.name}`,
        );
      }
      await rm(to, { recursive: true, force: true });
      await mkdir(join(to, '..'), { recursive: true });
      await cp(from, to, { recursive: true, verbatimSymlinks: true });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}
