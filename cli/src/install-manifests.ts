import { fileURLToPath } from 'node:url';
import { KINDS } from '@mooring/api';
import { build, createConfinedFs, type Resource } from '@mooring/kustomize';
import type { KubeObject } from '@mooring/runtime';

/** `config/` at the top of the repository: the install manifests. */
export const CONFIG_DIR = fileURLToPath(new URL('../../config', import.meta.url));

/** The operator image every Deployment runs. */
export const OPERATOR_IMAGE = 'ghcr.io/mooring-dev/mooring';

/** The Deployments `install` creates and `check` expects. */
export const OPERATOR_DEPLOYMENTS = ['source', 'kustomize', 'notification', 'image-automation'];

/** The name of each Mooring CRD. */
export const CRD_NAMES = KINDS.map((k) => `${k.plural}.${k.group}`);

/** Renders `config/` (or `dir`) with the operator image at `tag`, in kustomize's order. */
export async function installManifests(tag: string | undefined, dir = CONFIG_DIR): Promise<KubeObject[]> {
  const resources: Resource[] = await build(createConfinedFs(dir), '.', {
    overrides: tag ? { images: [{ name: OPERATOR_IMAGE, newTag: tag }] } : undefined,
  });
  return resources.map((r) => r.object as unknown as KubeObject);
}

/** CRDs and Namespaces go first: everything else needs them to exist. */
export function isFoundation(obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' || obj.kind === 'Namespace';
}
