// Bundles each operator's entry (and the all-in-one) with esbuild into plain ES modules that run on
// `node` with no loader: the operator image's /app, whose dist/<operator>.mjs the Deployments run
// (`node /app/dist/<operator>.mjs`). Through tsx every start transpiles hundreds of modules (3-4 s,
// ~240 MB); a bundle starts on plain Node. Shared code is split into chunks beside the entries, so
// the five entries do not each carry a copy of the Kubernetes client.
//   node --import tsx hack/lib/bundle-operators.ts [app-dir]     (default: .mooring/app)
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The bundles, by output name: `dist/<name>.mjs`. */
export const OPERATOR_ENTRIES: Readonly<Record<string, string>> = {
  source: 'operators/source/src/main.ts',
  kustomize: 'operators/kustomize/src/main.ts',
  notification: 'operators/notification/src/main.ts',
  'image-automation': 'operators/image-automation/src/main.ts',
  'all-in-one': 'operators/all-in-one/src/main.ts',
};

/**
 * What the bundles run with, beside their flags: the image's environment, and what the benches that
 * measure a bundle start it with, so their figures are a cluster's. Measured with the noop-passes
 * bench at 1,000 Kustomizations (docs/benchmarks.md):
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates an arena of its own, and what
 *   libuv's threads (files, zlib, crypto) and the TLS sockets left resident was about 30 MB of a
 *   converged operator's native memory.
 * - `--max-semi-space-size=8`: V8 let the young generation grow to 32 MB under load and kept it
 *   while idle; 16 MB costs no measurable CPU here and V8 then gives idle memory back.
 */
export const BUNDLE_RUNTIME_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  NODE_OPTIONS: '--max-semi-space-size=8',
};

/** This process's environment with the bundles' runtime settings: what a bench starts a bundle with. */
export function bundleEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...BUNDLE_RUNTIME_ENV };
}

/** The in-cluster web UI (config/ui), `dist/ui.mjs`, with its page prebuilt into `dist/ui-page/`. */
export const UI_ENTRY: Readonly<Record<string, string>> = { ui: 'cli/src/ui/in-cluster-main.ts' };

// Files read at run time beside the module that reads them (import.meta.url). shared/helm's
// renderer worker is a file of its own (new URL('./wasi-worker.mjs', import.meta.url)); the
// renderer itself is found through $MOORING_HELM_WASM, which the image sets.
// The same list as the CLI bundle's (cli/bin/bundle.js).
const ASSETS: readonly string[] = JSON.parse(
  readFileSync(join(ROOT, 'hack/lib/runtime-assets.json'), 'utf8'),
);
// Packages loaded at run time through createRequire, which a bundler cannot follow: shipped as
// they are under <app>/node_modules, the image's only production dependencies. undici is required
// late on purpose (operators/notification/src/providers/undici.ts) and has no dependencies.
const RUNTIME_PACKAGES = ['undici'];

/** A package the bundles were built from: what the SBOM lists. */
export interface BundledPackage {
  name: string;
  version: string;
  license?: string;
}

export interface BundleResult {
  appDir: string;
  /** The npm packages (not workspaces) whose code is inside the bundles. */
  packages: BundledPackage[];
}

/** The package an input path under node_modules belongs to (`@scope/name` or `name`). */
function packageDirOf(input: string): string | undefined {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + name).join('/');
}

function bundledPackages(inputs: string[]): BundledPackage[] {
  const dirs = new Set(inputs.map(packageDirOf).filter((d): d is string => d !== undefined));
  const found = new Map<string, BundledPackage>();
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    found.set(`${pkg.name}@${pkg.version}`, { name: pkg.name, version: pkg.version, license: pkg.license });
  }
  return [...found.values()].sort((a, b) => (a.name === b.name ? 0 : a.name < b.name ? -1 : 1));
}

/** The app directory the tests and the image use by default. */
export const DEFAULT_APP_DIR = join(ROOT, '.mooring', 'app');

/**
 * Builds `appDir` (emptied first): dist/ with every bundle, its source map and the assets, and
 * node_modules/ with the packages required at run time. The same inputs give the same bytes.
 */
export async function bundleOperators(appDir = DEFAULT_APP_DIR): Promise<BundleResult> {
  const { build } = await import('esbuild');
  const outDir = join(appDir, 'dist');
  rmSync(appDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: Object.fromEntries(
      Object.entries({ ...OPERATOR_ENTRIES, ...UI_ENTRY }).map(([n, p]) => [n, join(ROOT, p)]),
    ),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    // Chunks sit beside the entries, so import.meta.url of any of them finds the assets.
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // Source paths in the maps relative to the repository, not to this machine's checkout.
    sourceRoot: '',
    absWorkingDir: ROOT,
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
    // CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __mooringRequire } from 'node:module'; const require = __mooringRequire(import.meta.url);",
    },
  });
  for (const asset of ASSETS) copyFileSync(join(ROOT, asset), join(outDir, asset.split('/').pop()!));
  // The UI's page, bundled now: the image has no esbuild to bundle it at start ($MOORING_UI_PAGE_DIR).
  const { writePage } = await import('../../cli/src/ui/page-bundle.ts');
  await writePage(join(outDir, 'ui-page'));
  const runtimeDirs = RUNTIME_PACKAGES.map((name) => `node_modules/${name}`);
  for (const dir of runtimeDirs) cpSync(join(ROOT, dir), join(appDir, dir), { recursive: true });
  const packages = bundledPackages([
    ...Object.keys(result.metafile.inputs),
    ...runtimeDirs.map((d) => `${d}/x`),
  ]);
  writeFileSync(join(outDir, 'packages.json'), `${JSON.stringify(packages, null, 2)}\n`);
  return { appDir, packages };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = await bundleOperators(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(
    `bundled ${Object.keys(OPERATOR_ENTRIES).join(', ')} into ${relative(process.cwd(), out.appDir)}/dist (${out.packages.length} npm packages)`,
  );
}
