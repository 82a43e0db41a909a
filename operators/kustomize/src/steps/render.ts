import { Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { clusterLookup } from '../helm-lookup.ts';
import { impersonationFor } from '../impersonation.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { defaultHelmRenderLimits, renderSpecOf } from '../render/index.ts';
import type { RenderInputs } from '../render.ts';

/** The render of the source's artifact at `spec.path` with the object's overrides, from the cache when unchanged. */
export async function render(run: KustomizationRun): Promise<undefined> {
  const { obj, deps } = run;
  const source = need(run.source, 'the source');
  run.status.lastAttemptedRevision = source.artifact.revision;
  // The same lookup of keys and variables that `mooring build kustomization` makes.
  // .Capabilities and lookup from the cluster the objects go to, as the identity the apply writes
  // as; read only if a chart renders.
  const target = run.target ?? deps.client;
  const impersonate = impersonationFor(obj, deps.defaultServiceAccount);
  const inputs: RenderInputs = {
    ...(await renderSpecOf(deps.client, obj)),
    artifact: source.artifact,
    reader: JSON.stringify({
      namespace: obj.metadata.namespace,
      impersonate,
      kubeConfig: obj.spec.kubeConfig,
    }),
  };
  run.rendered = await deps.renderCache.get(
    inputs,
    run.signal,
    {
      limits: deps.helm?.limits ?? defaultHelmRenderLimits,
      ...(deps.helm ? { capabilities: deps.helm.capabilities.for(target) } : {}),
      lookup: clusterLookup(target, impersonate),
    },
    (hit) => run.ctx.metrics?.observeRenderCache?.(hit),
  );
  return undefined;
}

/** An empty render while objects are applied is refused unless `spec.allowEmpty` (Argo CD's guard). */
export function refuseEmptyRender(run: KustomizationRun): undefined {
  const rendered = need(run.rendered, 'the render');
  const applied = run.previous?.entries.length ?? 0;
  if (rendered.manifests.length === 0 && applied > 0 && !run.obj.spec.allowEmpty) {
    throw new RetryableError(
      Reason.EmptyRenderRefused,
      `revision '${need(run.source, 'the source').artifact.revision}' renders no objects while ${applied} are applied: refusing to prune them all; set spec.allowEmpty: true if this is intended`,
    );
  }
  return undefined;
}
