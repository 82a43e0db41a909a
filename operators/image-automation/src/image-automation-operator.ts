import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createGitClient, type GitClient } from '@mooring/git';
import type { MooringObject, OperatorDefinition, Reconciler } from '@mooring/runtime';
import { IMAGE_FLAGS, imageOptions } from './image-flags.ts';
import { imagePolicyReconciler } from './image-policy-reconciler.ts';
import { imageRepositoryReconciler } from './image-repository-reconciler.ts';
import { imageUpdateAutomationReconciler } from './image-update-automation-reconciler.ts';
import { TagStore } from './tag-store.ts';

/**
 * The image-automation operator: ImageRepository (scan tags), ImagePolicy (choose one) and
 * ImageUpdateAutomation (commit it to Git) in one process, sharing the on-disk tag store.
 * `overrides.git` replaces the Git client `--git-backend` would pick (tests interleave pushes with it).
 */
export function imageAutomationOperator(overrides: { git?: GitClient } = {}): OperatorDefinition {
  let store: TagStore | undefined;
  let gitBackend: 'cli' | 'isomorphic' = 'cli';
  return {
    name: 'image-automation',
    extraFlags: IMAGE_FLAGS,

    async start(ctx) {
      const opts = imageOptions(ctx.options);
      const root = resolve(opts.storagePath);
      await mkdir(root, { recursive: true });
      store = new TagStore(root);
      gitBackend = opts.gitBackend;
      ctx.log.info({ storagePath: root, gitBackend }, 'tag storage ready');
      return async () => {};
    },

    reconcilers(ctx) {
      if (!store)
        throw new Error('the image-automation operator must be started before its reconcilers are built');
      const shared = {
        client: ctx.client,
        noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
        dependencyRequeueMs: ctx.options.requeueDependencyMs,
      };
      // Reconcilers of different kinds share one list, so their object types are erased here.
      const reconcilers: Reconciler<MooringObject>[] = [
        imageRepositoryReconciler({ client: ctx.client, store }) as never,
        imagePolicyReconciler({ ...shared, store }) as never,
        imageUpdateAutomationReconciler({
          ...shared,
          git: overrides.git ?? createGitClient(gitBackend),
        }) as never,
      ];
      return reconcilers;
    },
  };
}
