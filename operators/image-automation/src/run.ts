import { type ImageRepository, Reason } from '@mooring/api';
import { imageReference, type OciReference } from '@mooring/oci';
import { StalledError } from '@mooring/runtime';

/** The step's precondition: a field an earlier step fills. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not set; a step ran out of order`);
  return value;
}

/** The image reference, or a Stalled ImageURLInvalid: a bad name will not fix itself. */
export function imageRefOf(repo: ImageRepository): OciReference {
  try {
    return imageReference(repo.spec.image);
  } catch (err) {
    throw new StalledError(Reason.ImageURLInvalid, (err as Error).message.replace(/\.$/, ''));
  }
}

/** What a reconcile reports when its steps are done: Ready's message and the revision. */
export interface RunResult {
  message: string;
  revision: string | undefined;
}
