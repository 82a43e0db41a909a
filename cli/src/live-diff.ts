import { FIELD_MANAGER, type Kustomization, type ResourceInventory } from '@mooring/api';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { maskSecrets } from './secret-mask.ts';

/** One object's difference between the cluster and what the render would apply. */
export interface ObjectDiff {
  id: string;
  change: 'created' | 'configured' | 'deleted';
  patch: string;
}

// Fields the server owns: they differ on every object and say nothing about drift.
const NOISE = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink'];

function normalize(obj: KubeObject | undefined): KubeObject | undefined {
  if (!obj) return undefined;
  const copy = structuredClone(obj);
  for (const k of NOISE) delete copy.metadata[k];
  delete copy.status;
  return copy;
}

const toText = (obj: KubeObject | undefined): string =>
  obj ? stringify(obj, { lineWidth: 0, sortMapEntries: true }) : '';

function idOf(obj: { kind: string; metadata: { namespace?: string; name?: string } }): string {
  return `${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}

function patchOf(id: string, before: KubeObject | undefined, after: KubeObject | undefined): string {
  maskSecrets(before, after);
  return createTwoFilesPatch(`live/${id}`, `merged/${id}`, toText(before), toText(after), '', '', {
    context: 3,
  })
    .split('\n')
    .slice(1) // drop the `===` banner; the ---/+++ lines name the object
    .join('\n');
}

/**
 * Server-side dry-run applies each rendered object as the operator would (its field manager,
 * forced) and diffs the result against the live object; prunable inventory entries show as deleted.
 */
/** What the diff needs of the object that applies: its namespace, whether it prunes, its inventory. */
export type DiffOwner = Pick<Kustomization, 'metadata'> & {
  spec: { prune?: boolean };
  status?: { inventory?: ResourceInventory };
};

export async function diffAgainstCluster(
  client: KubeClient,
  ks: DiffOwner,
  rendered: KubeObject[],
): Promise<ObjectDiff[]> {
  const out: ObjectDiff[] = [];
  const renderedIds = new Set<string>();
  for (const obj of rendered) {
    const mapping = await client.mapper.map(obj.apiVersion, obj.kind).catch((err: Error) => {
      throw new CliError(`${idOf(obj)} has a kind the cluster does not serve (${err.message}).`, EXIT_ERROR);
    });
    if (mapping.namespaced && !obj.metadata.namespace) obj.metadata.namespace = ks.metadata.namespace;
    if (!mapping.namespaced) delete obj.metadata.namespace;
    const id = idOf(obj);
    renderedIds.add(`${obj.metadata.namespace ?? ''}_${obj.metadata.name}_${mapping.group}_${obj.kind}`);
    const key = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name!,
    };
    const live = await client.getOrUndefined(key);
    let merged: KubeObject;
    try {
      merged = await client.apply(obj, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
    } catch (err) {
      // A namespace the same render creates does not exist yet: the object is simply new.
      if (err instanceof ApiError && err.isNotFound && !live) merged = obj;
      else {
        const failed = new CliError(
          `server-side dry-run of ${id} failed: ${(err as Error).message}`,
          EXIT_ERROR,
        );
        // The UI answers with the API server's own status: a refused dry run stays a 403.
        failed.cause = err;
        throw failed;
      }
    }
    const before = normalize(live);
    const after = normalize(merged);
    if (before && toText(before) === toText(after)) continue;
    out.push({ id, change: before ? 'configured' : 'created', patch: patchOf(id, before, after) });
  }
  if (ks.spec.prune) {
    for (const entry of ks.status?.inventory?.entries ?? []) {
      if (renderedIds.has(entry.id)) continue;
      const [namespace, name, group, kind] = entry.id.split('_') as [string, string, string, string];
      const live = await client.getOrUndefined({
        apiVersion: entry.v.includes('/') || !group ? entry.v : `${group}/${entry.v}`,
        kind,
        namespace: namespace || undefined,
        name,
      });
      if (!live) continue;
      const id = idOf(live);
      out.push({ id, change: 'deleted', patch: patchOf(id, normalize(live), undefined) });
    }
  }
  return out;
}
