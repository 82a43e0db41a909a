import type { ImagePolicy, ImageRef, ImageRepository } from '@mooring/api';
import type { KubeClient, ReconcileContext } from '@mooring/runtime';
import type { RunResult } from './run.ts';
import type { TagStore } from './tag-store.ts';

export interface ImagePolicyDeps {
  client: KubeClient;
  store: TagStore;
  noCrossNamespaceRefs: boolean;
  /** How soon to look again while the ImageRepository has not scanned. */
  dependencyRequeueMs: number;
}

/**
 * One reconcile of one ImagePolicy: what the steps in ./steps/image-policy read and what each adds
 * for the next. Fields a step fills are optional until then.
 */
export interface ImagePolicyRun {
  readonly obj: ImagePolicy;
  readonly ctx: ReconcileContext;
  readonly status: NonNullable<ImagePolicy['status']>;
  readonly deps: ImagePolicyDeps;
  /** The ImageRepository's namespace and name, and how messages name it. */
  readonly repoNamespace: string;
  readonly repoName: string;
  readonly what: string;
  repo?: ImageRepository;
  /** The repository's stored tags. */
  tags?: string[];
  /** The tag the policy chose. */
  tag?: string;
  /** The image the policy resolves to, with its digest when the digestReflectionPolicy asks. */
  latest?: ImageRef;
  result?: RunResult;
}
