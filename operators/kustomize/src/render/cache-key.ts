import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * JSON with every object's keys sorted, so equal values give equal text whatever order their
 * fields were written in. As JSON.stringify: `undefined` fields are left out, `undefined` in an
 * array is `null`, `toJSON` is honoured.
 */
export function canonicalJSON(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

// Secrets are keyed by an HMAC under a key of this process: a low-entropy value (a password in a
// postBuild Secret) cannot be guessed back from key material that reached a log. The caches are
// in memory, so keys need not agree across processes.
const SECRET_KEY = randomBytes(32);

/** Where secrets sit in the render inputs: the age identities, and the postBuild variables (often from Secrets). */
const SECRET_PATHS: readonly (readonly string[])[] = [['decryption'], ['substitute', 'vars']];

/** A stand-in for a secret value: equal values, equal stand-ins; the value cannot be read from it. */
const secretStandIn = (value: unknown): string =>
  `hmac-sha256:${createHmac('sha256', SECRET_KEY).update(canonicalJSON(value)).digest('hex')}`;

/**
 * The whole inputs object as canonical JSON, with each secret replaced by its stand-in: every
 * field is part of it, including ones added later, so a new input can never be forgotten and serve
 * a stale render. Safe to log.
 */
export function renderKeyMaterial(inputs: object): string {
  const copy = structuredClone(inputs) as Record<string, unknown>;
  for (const path of SECRET_PATHS) {
    let parent: Record<string, unknown> | undefined = copy;
    for (const key of path.slice(0, -1)) {
      const next: unknown = parent?.[key];
      parent = next !== null && typeof next === 'object' ? (next as Record<string, unknown>) : undefined;
    }
    const last = path[path.length - 1]!;
    if (parent && parent[last] !== undefined) parent[last] = secretStandIn(parent[last]);
  }
  return canonicalJSON(copy);
}

/** The render cache's key: sha256 of {@link renderKeyMaterial}. */
export function renderKey(inputs: object): string {
  return createHash('sha256').update(renderKeyMaterial(inputs)).digest('hex');
}
