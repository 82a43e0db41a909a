import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import {
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
} from '@mooring/api';
import { build, createConfinedFs, KustomizeError, type Resource, toYAML } from '@mooring/kustomize';
import { ApiError, type KubeClient, type KubeObject, readObjectData } from '@mooring/runtime';
// The operator's own render pieces, so a local render follows the same rules as the cluster's.
import { overridesOf } from '../../operators/kustomize/src/render.ts';
import { substituteVariables } from '../../operators/kustomize/src/substitute.ts';
import { CliError } from './cli-error.ts';

/** Splits a local directory into a confined root (the filesystem root) and a path inside it. */
function confine(dir: string): { root: string; path: string } {
  const abs = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new CliError(`${dir} is not a directory: pass the folder that holds the manifests.`, 2);
  // `../base` may point anywhere, as with `kustomize build`, so the root is the top-level folder
  // (`/home`, `/work`): createConfinedFs refuses every path when its root is `/` itself.
  const real = realpathSync(abs);
  const top = real.split(sep)[1] ?? '';
  return { root: `${sep}${top}`, path: real.slice(top.length + 2) || '.' };
}

/** `kustomize build <dir>` with Mooring's engine: the same YAML, byte for byte. */
export async function renderDirectory(dir: string): Promise<string> {
  const { root, path } = confine(dir);
  try {
    return toYAML(await build(createConfinedFs(root), path));
  } catch (err) {
    if (err instanceof KustomizeError) throw new CliError(`kustomize build of ${dir} failed: ${err.message}`);
    throw err;
  }
}

async function readVariables(
  client: KubeClient,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
  optional: boolean,
): Promise<Record<string, string>> {
  const data = await readObjectData(client, kind, namespace, name);
  if (data !== undefined) return data;
  if (optional) return {};
  throw new CliError(
    `postBuild.substituteFrom names ${kind} ${namespace}/${name}, which does not exist: create it or mark it optional.`,
  );
}

/** Reads a Kustomization from the cluster. */
export async function getKustomization(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<Kustomization> {
  try {
    return await client.get<Kustomization & KubeObject>({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      namespace,
      name,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new CliError(
        `Kustomization ${namespace}/${name} not found: list them with 'mooring get kustomizations -n ${namespace}'.`,
      );
    throw err;
  }
}

/**
 * Renders `dir` as the operator renders the Kustomization's artifact: its overrides, postBuild
 * variables from the cluster, and the owner labels. SOPS decryption is not done locally.
 */
export async function renderKustomization(
  client: KubeClient,
  ks: Kustomization,
  dir: string,
): Promise<KubeObject[]> {
  const { root, path } = confine(dir);
  const namespace = ks.metadata.namespace ?? 'default';
  let resources: Resource[];
  try {
    resources = await build(createConfinedFs(root), path, {
      generateWhenMissing: true,
      loadRestrictions: 'none',
      overrides: overridesOf(ks),
    });
  } catch (err) {
    if (err instanceof KustomizeError) throw new CliError(`kustomize build of ${dir} failed: ${err.message}`);
    throw err;
  }
  const post = ks.spec.postBuild;
  let vars: Record<string, string> | undefined;
  if (post) {
    vars = {};
    for (const ref of post.substituteFrom ?? [])
      Object.assign(vars, await readVariables(client, ref.kind, namespace, ref.name, !!ref.optional));
    Object.assign(vars, post.substitute ?? {});
  }
  const out: KubeObject[] = [];
  for (const resource of resources) {
    let obj = resource.object as unknown as KubeObject;
    const label = `${obj.kind}/${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
    if (vars && post) {
      try {
        obj = substituteVariables(
          obj,
          vars,
          { strict: true, strategy: post.substituteStrategy ?? 'WithVariables' },
          label,
        );
      } catch (err) {
        throw new CliError(`post-build substitution failed: ${(err as Error).message}`);
      }
    }
    obj.metadata.labels = {
      ...obj.metadata.labels,
      [KUSTOMIZE_NAME_LABEL]: ks.metadata.name ?? '',
      [KUSTOMIZE_NAMESPACE_LABEL]: namespace,
    };
    out.push(obj);
  }
  return out;
}

/** The rendered objects as multi-document YAML, in kustomize's emitter. */
export function objectsToYAML(objects: KubeObject[]): string {
  return toYAML(objects.map((object) => ({ object: object as never, previousIds: [] })));
}
