// A field written with no value (`resources:`) and one written `null` are the same JSON null, but
// kyaml's strategic merge tells them apart: merging a patch into a resource keeps an untouched
// `null`/`~` and drops a field left empty (merge2's VisitMap checks the scalar's text). The loader
// notes the empty ones beside the map that holds them, keyed by that map, as exact-ints does for
// big integers; a transformer that rebuilds the map (a JSON patch, which kustomize round-trips
// through JSON, so its nulls are spelled out) drops the note, and the null stays.
import type { JsonObject } from './resource.ts';

const notes = new WeakMap<JsonObject, Set<string>>();

/** Notes that map[key] is null because the source gave the field no value at all. */
export function noteBareNull(map: JsonObject, key: string): void {
  let keys = notes.get(map);
  if (keys === undefined) {
    keys = new Set();
    notes.set(map, keys);
  }
  keys.add(key);
}

/** Whether map[key] is a null its source left empty (and has not been set since). */
export function isBareNull(map: JsonObject, key: string): boolean {
  return map[key] === null && notes.get(map)?.has(key) === true;
}

/** Carries the notes of a map over to its copy. */
export function copyBareNulls(from: JsonObject, to: JsonObject): void {
  const keys = notes.get(from);
  if (keys !== undefined) notes.set(to, keys);
}
