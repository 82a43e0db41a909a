import { type AppliedHealth, whyBlocked } from '@mooring/kstatus';
import type { KubeObject } from '@mooring/runtime';

export type { AppliedHealth } from '@mooring/kstatus';

/** An object by kind, namespace and name, as the index holds it; undefined when it does not exist. */
export type ObjectLookup = (kind: string, namespace: string, name: string) => KubeObject | undefined;

/** The one sentence and the object it blames (to link to), or undefined when the object is Ready. */
export interface Explanation {
  sentence: string;
  blocking?: { kind: string; namespace: string; name: string };
}

/**
 * "Why is this not applied?" for the object page: the chain `mooring why` prints (shared with it
 * and the operator, @mooring/kstatus), as one sentence, over the UI's watch cache; `health` is the
 * live kstatus of the object's own inventory, which the page has already read.
 */
export function whyNotApplied(
  obj: KubeObject,
  lookup: ObjectLookup,
  health: readonly AppliedHealth[] = [],
): Explanation | undefined {
  const why = whyBlocked(obj, lookup, (o) => (o === obj || sameObject(o, obj) ? health : undefined));
  return why && { sentence: why.sentence, blocking: why.blocking };
}

const sameObject = (a: { kind?: string; metadata: { namespace?: string; name?: string } }, b: KubeObject) =>
  a.kind === b.kind && a.metadata.namespace === b.metadata.namespace && a.metadata.name === b.metadata.name;
