import { join } from 'node:path';
import { KINDS, OPERATOR_NAMES } from '@mooring/api';
import { build, createConfinedFs, type Resource } from '@mooring/kustomize';
import type { KubeObject } from '@mooring/runtime';
import { REPO_ROOT } from './cli-paths.ts';

/** `config/` at the top of the repository: the install manifests. */
export const CONFIG_DIR = join(REPO_ROOT, 'config');

/** The operator image every Deployment runs. */
export const OPERATOR_IMAGE = 'ghcr.io/mooring-dev/mooring';

/** The Deployments `install` creates and `check` expects. */
/** The operators' Deployments, one per operator of the kind registry. */
export const OPERATOR_DEPLOYMENTS: readonly string[] = OPERATOR_NAMES;

/** The name of each Mooring CRD. */
export const CRD_NAMES = KINDS.map((k) => `${k.plural}.${k.group}`);

/** Where the operator image comes from, for private registries and mirrors (Flux's `--registry`). */
export interface ImageSource {
  /** Registry and path the image lives under: `registry.example/platform` runs `registry.example/platform/mooring`. */
  registry?: string;
  /** An existing docker-registry Secret in mooring-system that the operator pods pull with. */
  imagePullSecret?: string;
}

/** Renders `config/` (or `dir`) with the operator image at `tag`, in kustomize's order. */
export async function installManifests(
  tag: string | undefined,
  dir = CONFIG_DIR,
  source: ImageSource = {},
): Promise<KubeObject[]> {
  const newName = source.registry ? `${source.registry.replace(/\/+$/, '')}/mooring` : undefined;
  const images = tag || newName ? [{ name: OPERATOR_IMAGE, newTag: tag, newName }] : undefined;
  const resources: Resource[] = await build(createConfinedFs(dir), '.', {
    overrides: images ? { images } : undefined,
  });
  const objects = resources.map((r) => r.object as unknown as KubeObject);
  if (source.imagePullSecret) {
    for (const obj of objects.filter((o) => o.kind === 'Deployment')) {
      const pod = (obj.spec as { template: { spec: { imagePullSecrets?: { name: string }[] } } }).template
        .spec;
      pod.imagePullSecrets = [{ name: source.imagePullSecret }];
    }
  }
  return objects;
}

/** CRDs and Namespaces go first: everything else needs them to exist. */
export function isFoundation(obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' || obj.kind === 'Namespace';
}
