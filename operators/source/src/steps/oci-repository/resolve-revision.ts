import { Reason } from '@mooring/api';
import { type OciReference, pickSemverTag, type RegistryClient } from '@mooring/oci';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { OciRepositoryRun, ResolvedOciRef } from '../../oci-repository-run.ts';
import { need } from '../../source-run.ts';
import { pullFailure } from './pull-failure.ts';

/** The tag `spec.ref.semver` picks: the highest matching one, filtered by `semverFilter`. */
async function semverTag(
  run: OciRepositoryRun,
  registry: RegistryClient,
  target: OciReference,
  semver: string,
): Promise<string> {
  const { semverFilter } = run.obj.spec.ref ?? {};
  let filter: RegExp | undefined;
  try {
    filter = semverFilter ? new RegExp(semverFilter) : undefined;
  } catch {
    throw new StalledError(
      'InvalidSemverFilter',
      `ref.semverFilter '${semverFilter}' is not a valid regular expression`,
    );
  }
  const picked = pickSemverTag(await registry.listTags(target), semver, filter);
  if (!picked) {
    throw new RetryableError(
      Reason.OCIArtifactPullFailed,
      `no tag of ${target.host}/${target.repository} matches semver range '${semver}'`,
    );
  }
  return picked;
}

async function resolve(
  run: OciRepositoryRun,
  registry: RegistryClient,
  target: OciReference,
): Promise<ResolvedOciRef> {
  const ref = run.obj.spec.ref ?? {};
  if (ref.digest) {
    const manifest = await registry.resolveManifest(target, ref.digest);
    return { tag: undefined, digest: manifest.digest, manifest };
  }
  const tag = ref.semver ? await semverTag(run, registry, target, ref.semver) : ref.tag || 'latest';
  const manifest = await registry.resolveManifest(target, tag);
  return { tag, digest: manifest.digest, manifest };
}

/** The cheap registry call: the manifest digest `spec.ref` (a digest, tag or semver range) names now. */
export async function resolveRevision(run: OciRepositoryRun): Promise<undefined> {
  const registry = need(run.registry, 'the registry client');
  try {
    const resolved = await resolve(run, registry, need(run.target, 'the parsed URL'));
    run.resolved = resolved;
    run.revision = resolved.tag === undefined ? resolved.digest : `${resolved.tag}@${resolved.digest}`;
  } catch (err) {
    pullFailure(run, err);
  }
  return undefined;
}
