import { type Kustomization, Reason } from '@mooring/api';
import { type KubeClient, RetryableError, readObjectData } from '@mooring/runtime';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { overridesOf, type RenderInputs } from '../render.ts';

async function readData(
  client: KubeClient,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
  optional: boolean,
): Promise<Record<string, string> | undefined> {
  const data = await readObjectData(client, kind, namespace, name);
  if (data === undefined && !optional) {
    throw new RetryableError(Reason.BuildFailed, `${kind} ${namespace}/${name} not found`);
  }
  return data;
}

/** `postBuild` variables: `substituteFrom` in order (later wins), then the inline `substitute` over them. */
async function substitutionVars(client: KubeClient, obj: Kustomization): Promise<RenderInputs['substitute']> {
  const post = obj.spec.postBuild;
  if (!post) return undefined;
  const vars: Record<string, string> = {};
  for (const ref of post.substituteFrom ?? []) {
    const data = await readData(
      client,
      ref.kind as 'Secret' | 'ConfigMap',
      obj.metadata.namespace ?? 'default',
      ref.name,
      !!ref.optional,
    );
    Object.assign(vars, data ?? {});
  }
  Object.assign(vars, post.substitute ?? {});
  return { vars, options: { strict: true, strategy: post.substituteStrategy ?? 'WithVariables' } };
}

/** The age identities of `spec.decryption.secretRef`: every key ending in `.agekey`. */
async function decryptionKeys(client: KubeClient, obj: Kustomization): Promise<RenderInputs['decryption']> {
  const dec = obj.spec.decryption;
  if (!dec) return undefined;
  if (!dec.secretRef?.name) return { ageIdentities: [] };
  const data = await readData(
    client,
    'Secret',
    obj.metadata.namespace ?? 'default',
    dec.secretRef.name,
    false,
  );
  const ageIdentities = Object.entries(data ?? {})
    .filter(([k]) => k.endsWith('.agekey'))
    .map(([, v]) => v.trim());
  return { ageIdentities };
}

/** The render of the source's artifact at `spec.path` with the object's overrides, from the cache when unchanged. */
export async function render(run: KustomizationRun): Promise<undefined> {
  const { obj, deps } = run;
  const source = need(run.source, 'the source');
  run.status.lastAttemptedRevision = source.artifact.revision;
  const inputs: RenderInputs = {
    artifact: source.artifact,
    path: obj.spec.path ?? '',
    overrides: overridesOf(obj),
    decryption: await decryptionKeys(deps.client, obj),
    substitute: await substitutionVars(deps.client, obj),
    owner: run.owner,
  };
  run.rendered = await deps.renderCache.get(inputs, run.signal);
  return undefined;
}

/** An empty render while objects are applied is refused unless `spec.allowEmpty` (Argo CD's guard). */
export function refuseEmptyRender(run: KustomizationRun): undefined {
  const rendered = need(run.rendered, 'the render');
  const applied = run.previous?.entries.length ?? 0;
  if (rendered.manifests.length === 0 && applied > 0 && !run.obj.spec.allowEmpty) {
    throw new RetryableError(
      'EmptyRenderRefused',
      `revision '${need(run.source, 'the source').artifact.revision}' renders no objects while ${applied} are applied: refusing to prune them all; set spec.allowEmpty: true if this is intended`,
    );
  }
  return undefined;
}
