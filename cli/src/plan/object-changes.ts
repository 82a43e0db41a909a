// What a change does to one Kustomization's objects: the renders at the two revisions compared
// object by object, each changed one as a unified diff with Secret values masked.
import type { KubeObject } from '@mooring/runtime';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import { maskSecrets } from '../secret-mask.ts';

export interface ObjectChange {
  /** `Kind/namespace/name`, as `mooring diff` names objects. */
  id: string;
  change: 'added' | 'changed' | 'deleted';
  /** Unified diff from the base render to the head render. */
  patch: string;
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** Identity across revisions: an apiVersion bump of the same group is a change, not a delete and an add. */
const keyOf = (o: KubeObject): string =>
  `${groupOf(o.apiVersion)}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`;

export const idOf = (o: KubeObject): string =>
  `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

const toText = (o: KubeObject | undefined): string =>
  o ? stringify(o, { lineWidth: 0, sortMapEntries: true }) : '';

function patchOf(id: string, before: KubeObject | undefined, after: KubeObject | undefined): string {
  const b = before && structuredClone(before);
  const a = after && structuredClone(after);
  maskSecrets(b, a);
  return createTwoFilesPatch(`base/${id}`, `head/${id}`, toText(b), toText(a), '', '', { context: 3 })
    .split('\n')
    .slice(1) // drop the `===` banner; the ---/+++ lines name the object
    .join('\n');
}

/** Objects added, changed and deleted from `base` to `head`, in the head's order then the deleted. */
export function compareRenders(base: KubeObject[], head: KubeObject[]): ObjectChange[] {
  const before = new Map(base.map((o) => [keyOf(o), o]));
  const out: ObjectChange[] = [];
  const seen = new Set<string>();
  for (const obj of head) {
    const key = keyOf(obj);
    seen.add(key);
    const old = before.get(key);
    if (old && toText(old) === toText(obj)) continue;
    out.push({ id: idOf(obj), change: old ? 'changed' : 'added', patch: patchOf(idOf(obj), old, obj) });
  }
  for (const obj of base) {
    if (seen.has(keyOf(obj))) continue;
    out.push({ id: idOf(obj), change: 'deleted', patch: patchOf(idOf(obj), obj, undefined) });
  }
  return out;
}
