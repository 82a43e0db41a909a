/** A promise's outcome as a value: one started early and read later cannot go unhandled. */
export type Settled<T> = { ok: T } | { err: unknown };

/** Never rejects: the error waits, as a value, for whoever reads the outcome. */
export function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (ok) => ({ ok }),
    (err: unknown) => ({ err }),
  );
}

/** The value, or the error thrown now, where the reader can handle it. */
export function unsettle<T>(s: Settled<T>): T {
  if ('err' in s) throw s.err;
  return s.ok;
}
