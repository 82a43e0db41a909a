import { isDeepStrictEqual } from 'node:util';
import type { Manifest } from './object-policy.ts';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
  time?: string;
}

/** Managers whose edits Mooring takes over, as Flux does: kubectl's and the pre-SSA placeholder. */
export function isForeignEditor(manager: string | undefined): boolean {
  return manager !== undefined && (manager === 'before-first-apply' || manager.startsWith('kubectl'));
}

function mergeFields(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      prev && typeof prev === 'object' && v && typeof v === 'object'
        ? mergeFields(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

/**
 * The managedFields list with every kubectl entry folded into `fieldManager`'s Apply entry, so the
 * next apply owns (and can remove) what kubectl added or changed; undefined when there is nothing
 * to take over. Status-subresource entries are left alone.
 */
export function takeOverForeignFields(
  live: Manifest,
  fieldManager: string,
): ManagedFieldsEntry[] | undefined {
  const entries = (live.metadata.managedFields as ManagedFieldsEntry[] | undefined) ?? [];
  const foreign = entries.filter((e) => isForeignEditor(e.manager) && !e.subresource);
  if (foreign.length === 0) return undefined;
  const kept = entries.filter((e) => !foreign.includes(e));
  let ours = kept.find((e) => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource);
  if (!ours) {
    ours = {
      manager: fieldManager,
      operation: 'Apply',
      apiVersion: live.apiVersion,
      fieldsType: 'FieldsV1',
      fieldsV1: {},
    };
    kept.push(ours);
  }
  for (const e of foreign) ours.fieldsV1 = mergeFields(ours.fieldsV1 ?? {}, e.fieldsV1 ?? {});
  return kept;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether `fields` (a FieldsV1 set) owns a field that differs between `live` and `desired`. */
function ownsDifference(fields: Record<string, unknown>, live: unknown, desired: unknown): boolean {
  if (!isMap(live) || !isMap(desired)) return !isDeepStrictEqual(live, desired);
  for (const key of new Set([...Object.keys(live), ...Object.keys(desired)])) {
    if (isDeepStrictEqual(live[key], desired[key])) continue;
    const owned = fields[`f:${key}`];
    if (!isMap(owned)) continue;
    // A list's items are keyed in FieldsV1 (k:, v:, i:): owning any part of a changed list counts.
    if (!isMap(live[key]) || !isMap(desired[key])) return true;
    if (ownsDifference(owned, live[key], desired[key])) return true;
  }
  return false;
}

/**
 * The field managers other than `ours` that own a field where the live object differs from what
 * we would apply (`desired`, the server's dry run): who changed it behind our back. Status
 * subresource entries are not edits of the object's intent.
 */
export function driftedFieldManagers(live: Manifest, desired: Manifest, ours: string): string[] {
  const entries = (live.metadata.managedFields as ManagedFieldsEntry[] | undefined) ?? [];
  const { status: _ls, ...liveSpec } = live;
  const { status: _ds, ...desiredSpec } = desired;
  const names = new Set<string>();
  for (const e of entries) {
    if (!e.manager || e.manager === ours || e.subresource || !e.fieldsV1) continue;
    if (ownsDifference(e.fieldsV1, liveSpec, desiredSpec)) names.add(e.manager);
  }
  return [...names].sort();
}
