// Apply waves inside one Kustomization: `mooring.dev/apply-wave` (or Argo CD's sync-wave) orders
// the regular objects, lower waves first; an object without one is in wave 0, as in Argo CD.
import type { Manifest } from '../apply/object-policy.ts';

export const WAVE_ANNOTATION = 'mooring.dev/apply-wave';
export const ARGO_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** One wave: its number and its objects, in render order. */
export interface Wave {
  wave: number;
  objects: Manifest[];
}

/** The object's wave; throws a one-sentence Error when the annotation is not an integer. Mooring's wins. */
export function waveOf(obj: Manifest): number {
  const annotations = obj.metadata.annotations ?? {};
  const name = WAVE_ANNOTATION in annotations ? WAVE_ANNOTATION : ARGO_WAVE_ANNOTATION;
  const value = annotations[name];
  if (value === undefined) return 0;
  const trimmed = value.trim();
  const wave = Number(trimmed);
  if (!/^[+-]?\d+$/.test(trimmed) || !Number.isSafeInteger(wave))
    throw new Error(`${name}: '${value}' is not an integer`);
  return wave;
}

/** The objects grouped by wave, lowest first; each wave keeps the render order. */
export function groupWaves(objects: readonly { obj: Manifest; wave: number }[]): Wave[] {
  const byWave = new Map<number, Manifest[]>();
  for (const { obj, wave } of objects) {
    const group = byWave.get(wave);
    if (group) group.push(obj);
    else byWave.set(wave, [obj]);
  }
  return [...byWave.entries()].sort(([a], [b]) => a - b).map(([wave, objs]) => ({ wave, objects: objs }));
}
