import { type Step, step } from '@mooring/runtime';
import type { ImagePolicyRun } from '../../image-policy-run.ts';
import { recordLatest } from './record-latest.ts';
import { resolveDigest } from './resolve-digest.ts';
import { readTags, resolveRepository } from './resolve-repository.ts';
import { selectTag } from './select-tag.ts';

/** An ImagePolicy's reconcile; docs/architecture.md lists the same steps. */
export const IMAGE_POLICY_STEPS: readonly Step<ImagePolicyRun>[] = [
  step('resolve image repository', resolveRepository),
  step('read tags', readTags),
  step('select tag', selectTag),
  step('resolve digest', resolveDigest),
  step('record latest image', recordLatest),
];
