import { isDeepStrictEqual } from 'node:util';
import type { Manifest } from './object-policy.ts';

/** Fields the API server owns or bumps on every write; a difference there is not drift. */
const VOLATILE_METADATA = [
  'managedFields',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'uid',
  'selfLink',
];

function comparable(obj: Manifest): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = obj;
  const meta = { ...metadata };
  for (const key of VOLATILE_METADATA) delete meta[key];
  return { ...rest, metadata: meta };
}

/**
 * Whether applying would change anything: the server's dry-run result against the live object,
 * both without status and server-maintained metadata.
 */
export function wouldChange(live: Manifest, dryRun: Manifest): boolean {
  return !isDeepStrictEqual(comparable(live), comparable(dryRun));
}
