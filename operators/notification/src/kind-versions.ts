import { kindApiVersion, NOTIFIABLE_KINDS } from '@mooring/api';

/** API version of each kind an Alert can watch or a Receiver can trigger, when a reference names none. */
export const KIND_API_VERSIONS: Readonly<Record<string, string>> = Object.fromEntries(
  NOTIFIABLE_KINDS.map((kind) => [kind, kindApiVersion(kind)]),
);
