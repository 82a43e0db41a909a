import type { DriftIgnoreRule } from '@mooring/api';
import type { Manifest } from './object-policy.ts';

type Json = Record<string, unknown> | unknown[];

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function getAt(doc: unknown, path: string[]): { found: boolean; value?: unknown } {
  let cur = doc;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return { found: false };
    const next = (cur as Record<string, unknown>)[seg];
    if (next === undefined) return { found: false };
    cur = next;
  }
  return { found: true, value: cur };
}

function setAt(doc: Json, path: string[], value: unknown): void {
  let cur = doc as Record<string, unknown>;
  for (const seg of path.slice(0, -1)) {
    if (cur[seg] === null || typeof cur[seg] !== 'object') cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[path.at(-1)!] = value;
}

function deleteAt(doc: Json, path: string[]): void {
  const parent = getAt(doc, path.slice(0, -1));
  if (parent.found && parent.value && typeof parent.value === 'object') {
    delete (parent.value as Record<string, unknown>)[path.at(-1)!];
  }
}

function matchesTarget(obj: Manifest, target: DriftIgnoreRule['target']): boolean {
  if (!target) return true;
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  const anchored = (pattern: string | undefined, value: string) =>
    pattern === undefined || pattern === '' || new RegExp(`^(?:${pattern})$`).test(value);
  return (
    anchored(target.group, group ?? '') &&
    anchored(target.version, version ?? '') &&
    anchored(target.kind, obj.kind) &&
    anchored(target.name, obj.metadata.name ?? '') &&
    anchored(target.namespace, obj.metadata.namespace ?? '')
  );
}

/**
 * Applies `spec.ignore`: each ignored field takes the live value (or is left out when the live
 * object lacks it), so Mooring neither reverts nor fights another writer, such as an HPA's replicas.
 */
export function applyIgnoreRules(
  desired: Manifest,
  live: Manifest | undefined,
  rules: DriftIgnoreRule[],
): Manifest {
  const out = structuredClone(desired);
  for (const rule of rules) {
    if (!matchesTarget(desired, rule.target)) continue;
    for (const pointer of rule.paths) {
      const path = decodePointer(pointer);
      if (path.length === 0) continue;
      const current = live ? getAt(live, path) : { found: false };
      if (current.found) setAt(out, path, structuredClone(current.value));
      else deleteAt(out, path);
    }
  }
  return out;
}
