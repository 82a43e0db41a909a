import type { ConfinedFs } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import {
  findKustomizationFile,
  type ImageEntry,
  type Kustomization,
  kustomizationVersion,
  type PatchEntry,
  type Selector,
} from './kustomization-file.ts';
import { parseResources } from './load-resources.ts';
import type { JsonObject } from './resource.ts';

/** The fields of a Flux Kustomization spec that change the build (fluxcd/pkg kustomize generator). */
export interface KustomizationOverrides {
  targetNamespace?: string;
  namePrefix?: string;
  nameSuffix?: string;
  patches?: { patch: string; target?: Selector }[];
  images?: ImageEntry[];
  components?: string[];
  /** Drop `components` entries whose directory does not exist instead of failing (Flux's field of that name). */
  ignoreMissingComponents?: boolean;
  /** kustomize's `buildMetadata` (`originAnnotations`, `transformerAnnotations`), added to the top kustomization's. */
  buildMetadata?: string[];
  /** Applied to every object's metadata after the build (not to selectors), as kustomize-controller does. */
  commonMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

const isYamlFile = (name: string): boolean => name.endsWith('.yaml') || name.endsWith('.yml');

/**
 * The kustomization Flux writes for a directory that has none: every `.yaml`/`.yml` file below it
 * (which must decode as Kubernetes YAML), and sub-directories with their own kustomization as one entry
 * each, without descending into them. Order is filepath.Walk's: lexical, depth first.
 */
export function generateKustomization(fs: ConfinedFs, dir: string): JsonObject {
  const resources: string[] = [];
  const walk = (rel: string): void => {
    for (const name of fs.readDir(rel)) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (fs.isDir(child)) {
        if (findKustomizationFile(fs, child) !== undefined) resources.push(child);
        else walk(child);
        continue;
      }
      if (!isYamlFile(name)) continue;
      try {
        parseResources(fs.readFile(child).toString('utf8'), child);
      } catch (error) {
        throw new KustomizeError(
          `failed to decode Kubernetes YAML from ${child}: ${(error as Error).message}`,
        );
      }
      resources.push(child);
    }
  };
  walk(dir);
  const prefix = dir === '' ? '' : `${dir}/`;
  return {
    apiVersion: kustomizationVersion,
    kind: 'Kustomization',
    resources: resources.map((r) => `./${r.slice(prefix.length)}`),
  };
}

/** Merges a Flux Kustomization's overrides into the top-level kustomization, as kustomize-controller does. */
export function mergeOverrides(
  k: Kustomization,
  o: KustomizationOverrides,
  componentExists: (path: string) => boolean = () => true,
): Kustomization {
  const merged: Kustomization = { ...k };
  if (o.targetNamespace) merged.namespace = o.targetNamespace;
  if (o.namePrefix) merged.namePrefix = o.namePrefix;
  if (o.nameSuffix) merged.nameSuffix = o.nameSuffix;
  if (o.patches && o.patches.length > 0) {
    const extra: PatchEntry[] = o.patches.map((p) =>
      p.target ? { patch: p.patch, target: { ...p.target } } : { patch: p.patch },
    );
    merged.patches = [...(k.patches ?? []), ...extra];
  }
  if (o.images && o.images.length > 0) {
    const images = [...(k.images ?? [])];
    for (const image of o.images) {
      const at = images.findIndex((i) => i.name === image.name);
      if (at >= 0) images[at] = { ...image };
      else images.push({ ...image });
    }
    merged.images = images;
  }
  const components = (o.components ?? []).filter((c) => !o.ignoreMissingComponents || componentExists(c));
  if (components.length > 0) merged.components = [...(k.components ?? []), ...components];
  if (o.buildMetadata && o.buildMetadata.length > 0) {
    merged.buildMetadata = [...new Set([...(k.buildMetadata ?? []), ...o.buildMetadata])];
  }
  return merged;
}
