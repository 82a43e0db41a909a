import type { ImageRef } from '@mooring/api';
import type { ImagePolicyRun } from '../../image-policy-run.ts';
import { registryClientFor, registryFailure } from '../../registry-access.ts';
import { imageRefOf, need } from '../../run.ts';

const DIGEST_TIMEOUT_MS = 30_000;

/**
 * The chosen image, by the repository's canonical name, with its digest when the
 * digestReflectionPolicy asks: looked up in the registry (with the scan's access), or for
 * IfNotPresent kept from the status while the tag is the same.
 */
export async function resolveDigest(run: ImagePolicyRun): Promise<undefined> {
  const { obj, ctx, deps, status } = run;
  const repo = need(run.repo, 'the image repository');
  const tag = need(run.tag, 'the tag');
  const ref = imageRefOf(repo);
  const name = repo.status?.canonicalImageName ?? `${ref.host}/${ref.repository}`;
  const latest: ImageRef = { name, tag };
  const mode = obj.spec.digestReflectionPolicy ?? 'Never';
  const previous = status.latestRef;
  if (mode === 'IfNotPresent' && previous?.tag === tag && previous.name === name && previous.digest) {
    latest.digest = previous.digest;
  } else if (mode !== 'Never') {
    try {
      const signal = ctx.deadline(DIGEST_TIMEOUT_MS);
      const registry = await registryClientFor(deps.client, repo, ref, DIGEST_TIMEOUT_MS, signal);
      latest.digest = await registry.headDigest(ref, tag);
    } catch (err) {
      throw registryFailure(err);
    }
  }
  run.latest = latest;
  return undefined;
}
