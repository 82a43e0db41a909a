// undici, loaded so that it does not take over the process's fetch. When undici's module is first
// evaluated it installs an Agent of its own as the process-wide fetch dispatcher unless one is set
// already (lib/global.js, the `undici.globalDispatcher.1` slot on globalThis). Node's global fetch
// reads that same slot, so a plain `import 'undici'` here would move every fetch in the process
// (the artifact downloads of the source and kustomize operators beside this one in the all-in-one
// process) from Node's bundled undici onto this copy, with this copy's bugs: undici 7.30.2 kills
// the process with an uncatchable `assert(!this.paused)` when a server closes the connection while
// a response body is held back (nodejs/undici#5360). The notification operator passes an explicit
// dispatcher to every request (http-sender.ts) and needs no global one.
//
// The slot cannot simply be put back afterwards: loading undici also loads Node's bundled undici
// (undici reads `globalThis.Headers`), which then sees the slot taken and skips its own Agent, so
// an emptied slot would leave Node's fetch without a dispatcher. Instead Node's bundled undici is
// loaded first, as the first use of fetch or Headers would load it anyway, and sets its own Agent;
// undici then finds the slot taken and leaves it alone.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

void globalThis.Headers;
let undici: typeof Undici | undefined;

/**
 * undici, required on the first alert sent rather than with the operator: evaluating it was about
 * 0.2 s of CPU before /readyz answered. require, not import: Node's bundled undici (the line
 * above, at load) must be in place before undici's module runs, and callers stay synchronous.
 */
export function loadUndici(): typeof Undici {
  undici ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return undici;
}

export type { Dispatcher } from 'undici';
