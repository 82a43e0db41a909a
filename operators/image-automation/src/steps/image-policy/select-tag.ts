import { StalledError, WaitingError } from '@mooring/runtime';
import type { ImagePolicyRun } from '../../image-policy-run.ts';
import { InvalidPolicyError, selectLatest } from '../../policy.ts';
import { need } from '../../run.ts';

/**
 * The latest tag by the policy, after filterTags. A policy that cannot be read is Stalled; no
 * matching tag is not, as the next scan may bring one (and it wakes this policy).
 */
export function selectTag(run: ImagePolicyRun): undefined {
  const { obj, deps } = run;
  const tags = need(run.tags, 'the tags');
  let tag: string | undefined;
  try {
    tag = selectLatest(tags, obj.spec.policy, obj.spec.filterTags);
  } catch (err) {
    if (err instanceof InvalidPolicyError) throw new StalledError('InvalidPolicy', err.message);
    throw err;
  }
  if (tag === undefined) {
    throw new WaitingError(
      'NoMatchingTag',
      `no tag of ${run.what} (${tags.length} tags) matches the policy`,
      deps.dependencyRequeueMs * 10,
    );
  }
  run.tag = tag;
  return undefined;
}
