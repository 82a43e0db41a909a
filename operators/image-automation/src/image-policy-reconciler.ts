import {
  FINALIZER,
  IMAGE_API_VERSION,
  type ImagePolicy,
  type ImageRef,
  type ImageRepository,
  Reason,
} from '@mooring/api';
import {
  type KubeClient,
  parseDuration,
  type ReconcileResult,
  type Reconciler,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { checkCrossNamespace } from './cross-namespace.ts';
import { imageRefOf } from './image-repository-reconciler.ts';
import { InvalidPolicyError, selectLatest } from './policy.ts';
import { registryClientFor, registryFailure } from './registry-access.ts';
import type { TagStore } from './tag-store.ts';

export interface ImagePolicyDeps {
  client: KubeClient;
  store: TagStore;
  noCrossNamespaceRefs: boolean;
  /** How soon to look again while the ImageRepository has not scanned. */
  dependencyRequeueMs: number;
}

const DIGEST_TIMEOUT_MS = 30_000;

function sameRef(a: ImageRef | undefined, b: ImageRef | undefined): boolean {
  return a?.name === b?.name && a?.tag === b?.tag && (a?.digest ?? '') === (b?.digest ?? '');
}

function show(ref: ImageRef): string {
  return `${ref.name}:${ref.tag}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * ImagePolicy: read the referenced ImageRepository's stored tags, choose the latest by the policy
 * (after filterTags), look up its digest when the digestReflectionPolicy asks, and publish it in
 * `status.latestRef`. Runs again as soon as the repository's scan revision changes.
 */
export function imagePolicyReconciler(deps: ImagePolicyDeps): Reconciler<ImagePolicy> {
  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImagePolicy',
    finalizer: FINALIZER,
    defaultIntervalMs: 10 * 60_000,

    async reconcile(policy, ctx): Promise<ReconcileResult> {
      const status = ctx.status as NonNullable<ImagePolicy['status']>;
      const namespace = policy.metadata.namespace ?? 'default';
      const repoNs = policy.spec.imageRepositoryRef.namespace ?? namespace;
      const repoName = policy.spec.imageRepositoryRef.name;
      const what = `ImageRepository ${repoNs}/${repoName}`;
      const repo = await deps.client.getOrUndefined<ImageRepository>({
        apiVersion: IMAGE_API_VERSION,
        kind: 'ImageRepository',
        namespace: repoNs,
        name: repoName,
      });
      await checkCrossNamespace(deps.client, {
        noCrossNamespaceRefs: deps.noCrossNamespaceRefs,
        from: namespace,
        to: repoNs,
        what,
        accessFrom: repo?.spec.accessFrom,
      });
      if (!repo)
        throw new WaitingError(Reason.DependencyNotReady, `${what} not found`, deps.dependencyRequeueMs);
      const scanned = repo.status?.lastScanResult?.revision;
      const tags = scanned ? await deps.store.read(repoNs, repoName) : undefined;
      if (!tags) {
        throw new WaitingError(
          Reason.DependencyNotReady,
          `${what} has not been scanned yet`,
          deps.dependencyRequeueMs,
        );
      }

      let tag: string | undefined;
      try {
        tag = selectLatest(tags, policy.spec.policy, policy.spec.filterTags);
      } catch (err) {
        if (err instanceof InvalidPolicyError) throw new StalledError('InvalidPolicy', err.message);
        throw err;
      }
      if (tag === undefined) {
        // Not Stalled: the next scan may bring a matching tag, and it wakes this policy.
        throw new WaitingError(
          'NoMatchingTag',
          `no tag of ${what} (${tags.length} tags) matches the policy`,
          deps.dependencyRequeueMs * 10,
        );
      }

      const ref = imageRefOf(repo);
      const name = repo.status?.canonicalImageName ?? `${ref.host}/${ref.repository}`;
      const latest: ImageRef = { name, tag };
      const mode = policy.spec.digestReflectionPolicy ?? 'Never';
      const previous = status.latestRef;
      if (mode === 'IfNotPresent' && previous?.tag === tag && previous.name === name && previous.digest) {
        latest.digest = previous.digest;
      } else if (mode !== 'Never') {
        const signal = AbortSignal.any([AbortSignal.timeout(DIGEST_TIMEOUT_MS), ctx.signal]);
        try {
          const registry = await registryClientFor(deps.client, repo, ref, DIGEST_TIMEOUT_MS, signal);
          latest.digest = await registry.headDigest(ref, tag);
        } catch (err) {
          throw registryFailure(err);
        }
      }

      if (!sameRef(previous, latest)) {
        if (previous) status.observedPreviousRef = previous;
        status.latestRef = latest;
        ctx.event(
          'info',
          'Succeeded',
          previous
            ? `Latest image tag for ${name} updated from ${previous.tag} to ${tag}`
            : `Latest image tag for ${name} resolved to ${tag}`,
          { revision: show(latest) },
        );
      }
      const requeueAfterMs =
        mode === 'Always' && policy.spec.interval ? parseDuration(policy.spec.interval) : undefined;
      return {
        message: `Latest image tag for ${name} resolved to ${tag}`,
        revision: show(latest),
        ...(requeueAfterMs ? { requeueAfterMs } : {}),
      };
    },

    // A new scan revision of a repository re-evaluates every policy that reads it, right away.
    watches: [
      {
        apiVersion: IMAGE_API_VERSION,
        kind: 'ImageRepository',
        enqueue(changed, old, policies) {
          const revision = (o: unknown) =>
            (o as ImageRepository | undefined)?.status?.lastScanResult?.revision;
          if (old && revision(changed) === revision(old)) return [];
          const { namespace, name } = changed.metadata;
          return policies
            .filter(
              (p) =>
                p.spec.imageRepositoryRef.name === name &&
                (p.spec.imageRepositoryRef.namespace ?? p.metadata.namespace) === namespace,
            )
            .map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
        },
      },
    ],
  };
}
