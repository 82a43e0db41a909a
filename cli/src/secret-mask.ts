import type { KubeObject } from '@mooring/runtime';

const MASK = '***';

/**
 * Replaces Secret `data`/`stringData` values in both objects so no value can reach the output,
 * while a changed value still shows as a changed line (a different mask on each side).
 */
export function maskSecrets(before: KubeObject | undefined, after: KubeObject | undefined): void {
  if ((before ?? after)?.kind !== 'Secret') return;
  for (const field of ['data', 'stringData']) {
    const b = before?.[field] as Record<string, string> | undefined;
    const a = after?.[field] as Record<string, string> | undefined;
    const keys = new Set([...Object.keys(b ?? {}), ...Object.keys(a ?? {})]);
    for (const key of keys) {
      const changed = b?.[key] !== a?.[key];
      if (b && key in b) b[key] = changed ? `${MASK} (before)` : MASK;
      if (a && key in a) a[key] = changed ? `${MASK} (after)` : MASK;
    }
  }
  // The last-applied annotation would carry the values in clear text.
  for (const obj of [before, after])
    delete obj?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
}
