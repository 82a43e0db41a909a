import { createRequire } from 'node:module';
import type { KubeConfig as KubeConfigClass } from '@kubernetes/client-node';

// @kubernetes/client-node loads its ~2,500 generated model modules with any import of it: about a
// second of CPU in plain Node and three under tsx's loader, paid by every process (and every test
// file) that imports @mooring/runtime. Only kubeconfig reading needs its value, so it is loaded on
// the first KubeConfig built, through require(esm) (Node >= 20.19), which keeps callers synchronous.
let loaded: typeof KubeConfigClass | undefined;

/** A new, empty KubeConfig; the client library is loaded on the first call. */
export function newKubeConfig(): KubeConfigClass {
  loaded ??= (loadClientLibrary() as { KubeConfig: typeof KubeConfigClass }).KubeConfig;
  return new loaded();
}

// A bundler (esbuild, for the CLI and the fault-suite operator) sees the literal require() and
// bundles the library, still initialised on first use; unbundled ES modules have no require.
// Unbundled, MOORING_KUBE_CLIENT_BUNDLE may name the library pre-bundled into one file (the test
// runner sets it, see hack/run-tests.ts): the same code, loaded in a fraction of the time.
declare const require: ((id: string) => unknown) | undefined;
function loadClientLibrary(): unknown {
  if (typeof require === 'function') return require('@kubernetes/client-node');
  return createRequire(import.meta.url)(process.env.MOORING_KUBE_CLIENT_BUNDLE || '@kubernetes/client-node');
}
