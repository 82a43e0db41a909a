import type { Verifier } from './types.ts';

/** `generic`: the secret path alone authenticates. */
export const generic: Verifier = () => ({ ok: true });
