// Builds cli/.bundle/mooring.mjs: the whole CLI in one ES module (esbuild, the bundler tsx itself
// runs on). Through tsx every start transpiles and resolves hundreds of modules (about 4 s on a
// busy 2-core machine); the bundle starts in about 0.2 s. inputs.json lists the project files it
// was built from, so a later start can tell whether it is stale.
// @kubernetes/client-node is 14 of the 17 MB a single bundle would be, and V8 parses all of it on
// every start although only a kubeconfig user with an auth provider (oidc, gcp, azure) needs it
// (shared/runtime/src/client-node.ts imports it then): it goes in a file of its own,
// kube-client.cjs, which only those commands load.
import {
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = dirname(CLI_DIR);
export const BUNDLE_DIR = join(CLI_DIR, '.bundle');
export const BUNDLE = join(BUNDLE_DIR, 'mooring.mjs');
export const INPUTS = join(BUNDLE_DIR, 'inputs.json');
const KUBE_CLIENT = 'kube-client.cjs';
// Files read at run time next to the module that reads them (import.meta.url), copied beside the bundle.
// shared/helm's worker runs in its own thread from a file of its own (new URL(…, import.meta.url)).
// One list for this bundle and the operators' (hack/lib/bundle-operators.ts).
const ASSETS = JSON.parse(readFileSync(join(ROOT, 'hack/lib/runtime-assets.json'), 'utf8'));
// A change of dependencies shows here; files under node_modules are not checked one by one.
const LOCKFILE = join(ROOT, 'package-lock.json');

/** True when the bundle exists and no file it was built from changed since. */
export function bundleIsFresh() {
  try {
    const built = statSync(BUNDLE).mtimeMs;
    const inputs = JSON.parse(readFileSync(INPUTS, 'utf8'));
    return inputs.every((file) => statSync(join(ROOT, file)).mtimeMs <= built);
  } catch {
    return false;
  }
}

/**
 * @kubernetes/client-node as one CommonJS file at `outfile`. Also what hack/run-tests.ts gives the
 * test processes (MOORING_KUBE_CLIENT_BUNDLE): one file loads in a third of the time its ~2,500
 * modules take, and under tsx's loader in a seventh.
 */
export async function bundleKubeClient(outfile) {
  const { build } = await import('esbuild');
  await build({
    stdin: { contents: "module.exports = require('@kubernetes/client-node');", resolveDir: CLI_DIR },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    absWorkingDir: ROOT,
    logLevel: 'silent',
  });
}

/** Builds the bundle; concurrent builds each write their own files and rename them into place. */
export async function buildBundle() {
  const { build } = await import('esbuild');
  const started = Date.now();
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  const kubeClientTmp = join(BUNDLE_DIR, `${KUBE_CLIENT}.${process.pid}.tmp`);
  await bundleKubeClient(kubeClientTmp);
  const kubeClientApart = {
    name: 'kube-client-apart',
    setup(b) {
      b.onResolve({ filter: /^@kubernetes\/client-node$/ }, (args) =>
        args.kind === 'require-call' || args.kind === 'dynamic-import'
          ? { path: `./${KUBE_CLIENT}`, external: true }
          : undefined,
      );
    },
  };
  const result = await build({
    entryPoints: [join(CLI_DIR, 'src/main.ts')],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    absWorkingDir: ROOT,
    metafile: true,
    logLevel: 'silent',
    plugins: [kubeClientApart],
    // CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __mooringRequire } from 'node:module'; const require = __mooringRequire(import.meta.url);",
    },
  });
  for (const asset of ASSETS) copyFileSync(join(ROOT, asset), join(BUNDLE_DIR, asset.split('/').pop()));
  const inputs = Object.keys(result.metafile.inputs)
    .map((file) => relative(ROOT, resolve(ROOT, file)))
    .filter((file) => !file.split(/[\\/]/).includes('node_modules'));
  inputs.push(relative(ROOT, LOCKFILE), 'hack/lib/runtime-assets.json', ...ASSETS);
  writeFileSync(`${INPUTS}.${process.pid}.tmp`, JSON.stringify(inputs));
  // Stamped with the start time: a file edited during the build makes the result stale.
  utimesSync(tmp, started / 1000, started / 1000);
  renameSync(`${INPUTS}.${process.pid}.tmp`, INPUTS);
  // The library before the bundle that requires it: a start that sees the new bundle finds it.
  renameSync(kubeClientTmp, join(BUNDLE_DIR, KUBE_CLIENT));
  renameSync(tmp, BUNDLE);
}
