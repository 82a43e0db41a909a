import { createRequire } from 'node:module';

type ClientNode = typeof import('@kubernetes/client-node');

// @kubernetes/client-node is 14 MB of JavaScript and ~2,500 modules: parsing and initialising it
// was 0.4 s of every operator's start and 40 MB of its RSS. Mooring reads kubeconfigs itself
// (kube-config.ts); the library is loaded only for a kubeconfig user with an auth provider (oidc,
// gcp, azure), through a dynamic import, which a bundler puts in a chunk of its own that nothing
// else loads. MOORING_KUBE_CLIENT_BUNDLE may name the library pre-bundled into one CommonJS file
// (the test runner sets it, see hack/run-tests.ts): the same code, loaded in a fraction of the time.
let loading: Promise<ClientNode> | undefined;

/** @kubernetes/client-node, loaded on the first call. */
export function loadClientNode(): Promise<ClientNode> {
  loading ??= (async () => {
    const bundle = process.env.MOORING_KUBE_CLIENT_BUNDLE;
    if (bundle) return createRequire(import.meta.url)(bundle) as ClientNode;
    // A CommonJS copy imported (the CLI's kube-client.cjs) has its exports under default.
    const mod = (await import('@kubernetes/client-node')) as ClientNode & { default?: ClientNode };
    return mod.KubeConfig ? mod : mod.default!;
  })();
  return loading;
}
