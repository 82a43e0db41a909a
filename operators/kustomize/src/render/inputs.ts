import { type Kustomization, Reason } from '@mooring/api';
import type { KustomizationOverrides } from '@mooring/kustomize';
import { type KubeClient, RetryableError, readObjectData } from '@mooring/runtime';
import type { RenderSpec } from './pipeline.ts';

/** The Kustomization's fields that change what kustomize builds. */
export function overridesOf(obj: Kustomization): KustomizationOverrides {
  const s = obj.spec;
  return {
    targetNamespace: s.targetNamespace,
    namePrefix: s.namePrefix,
    nameSuffix: s.nameSuffix,
    patches: s.patches as KustomizationOverrides['patches'],
    images: s.images as KustomizationOverrides['images'],
    components: s.components,
    ignoreMissingComponents: s.ignoreMissingComponents,
    buildMetadata: s.buildMetadata,
    commonMetadata: s.commonMetadata,
  };
}

/** A ConfigMap or Secret the spec names for the render is missing; says which field names it. */
export class RenderObjectNotFoundError extends RetryableError {
  readonly field: 'postBuild.substituteFrom' | 'decryption.secretRef';
  readonly kind: 'Secret' | 'ConfigMap';
  readonly namespace: string;
  readonly objectName: string;

  constructor(
    field: RenderObjectNotFoundError['field'],
    kind: 'Secret' | 'ConfigMap',
    namespace: string,
    name: string,
  ) {
    super(Reason.BuildFailed, `${kind} ${namespace}/${name} not found`);
    this.field = field;
    this.kind = kind;
    this.namespace = namespace;
    this.objectName = name;
  }
}

async function readData(
  client: KubeClient,
  field: RenderObjectNotFoundError['field'],
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
  optional: boolean,
): Promise<Record<string, string> | undefined> {
  const data = await readObjectData(client, kind, namespace, name);
  if (data === undefined && !optional) throw new RenderObjectNotFoundError(field, kind, namespace, name);
  return data;
}

/** `postBuild` variables: `substituteFrom` in order (later wins), then the inline `substitute` over them. */
export async function substitutionOf(
  client: KubeClient,
  obj: Kustomization,
): Promise<RenderSpec['substitute']> {
  const post = obj.spec.postBuild;
  if (!post) return undefined;
  const vars: Record<string, string> = {};
  for (const ref of post.substituteFrom ?? []) {
    const data = await readData(
      client,
      'postBuild.substituteFrom',
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
export async function decryptionOf(
  client: KubeClient,
  obj: Kustomization,
): Promise<RenderSpec['decryption']> {
  const dec = obj.spec.decryption;
  if (!dec) return undefined;
  if (!dec.secretRef?.name) return { ageIdentities: [] };
  const data = await readData(
    client,
    'decryption.secretRef',
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

/**
 * Everything the render of `obj` depends on but its files, read from the cluster as the operator
 * reads it: the overrides, the decryption keys, the postBuild variables and the owner. The operator
 * adds the artifact; `mooring build|diff kustomization` replaces `path` with a local folder.
 */
export async function renderSpecOf(client: KubeClient, obj: Kustomization): Promise<RenderSpec> {
  return {
    path: obj.spec.path ?? '',
    overrides: overridesOf(obj),
    decryption: await decryptionOf(client, obj),
    substitute: await substitutionOf(client, obj),
    owner: { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' },
  };
}
