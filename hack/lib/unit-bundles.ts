// `run-tests --unit` runs each test file as one pre-built JavaScript bundle on plain Node, not
// through tsx: a test file that imports @mooring/runtime and @mooring/kustomize costs about 2 s of
// CPU to start under tsx's loader (every project module is resolved and loaded through its hooks)
// and 0.6 s bundled, and a unit run starts 158 of them. esbuild (the transpiler tsx itself runs on)
// builds all files in one call; what runs is the same TypeScript, stripped of its types as tsx does.
//
// What a bundle changes, and how it is kept the same:
// - import.meta.url, .dirname and .filename are each module's own (fixtures, workers and binaries
//   are found next to the file that names them), written into the module as literals.
// - Packages from node_modules stay outside the bundle, imported by the absolute path esbuild
//   resolves from the importing file, so a workspace's own copy (cli/node_modules/commander) is
//   still the one it gets; @kubernetes/client-node is the runner's pre-bundled copy
//   (hack/lib/kube-client-bundle.ts), as MOORING_KUBE_CLIENT_BUNDLE gives it to unbundled code.
// - Source maps go beside each bundle, so stack traces and coverage name the .ts lines.
// - Code shared by several files is in chunks beside the bundles, each an ES module of its own.
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Loader, type Plugin, transformSync } from 'esbuild';

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
};

/**
 * Each module's import.meta.* as literals of its own location. esbuild's define rewrites the
 * expressions in the syntax tree (text inside strings stays as it is), one file at a time; the
 * inline source map of that step is followed by the bundle's.
 */
function ownImportMeta(): Plugin {
  return {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (args.path.includes('/node_modules/')) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const { code } = transformSync(text, {
          loader: LOADERS[extname(args.path)] ?? 'ts',
          sourcefile: args.path,
          sourcemap: 'inline',
          target: 'node20',
          tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, target: 'ES2023' } },
          define: {
            'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
            'import.meta.dirname': JSON.stringify(dirname(args.path)),
            'import.meta.filename': JSON.stringify(args.path),
          },
        });
        return { contents: code, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Packages stay external, by absolute path; the workspace's own packages are bundled. */
function externalPackages(kubeClientBundle: string): Plugin {
  return {
    name: 'external-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.path.startsWith('node:') || args.pluginData === 'resolving') return undefined;
        // Only require() takes the CommonJS copy: Node cannot see its named exports from an import.
        if (args.path === '@kubernetes/client-node' && args.kind === 'require-call')
          return { path: kubeClientBundle, external: true };
        const found = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'resolving',
        });
        if (found.errors.length > 0) return { errors: found.errors };
        if (!found.path.includes('/node_modules/') || found.external) return undefined;
        return { path: found.path, external: true };
      });
    },
  };
}

/**
 * Bundles `files` (absolute paths of *.test.ts) into `outDir`, mirroring their paths under
 * `repoRoot`, and returns each file's bundle. `outDir` must be the run's own: a run inside a run
 * (hack/run-tests.test.ts) must not remove the bundles of the one that started it.
 */
export async function bundleTestFiles(
  repoRoot: string,
  files: string[],
  outDir: string,
  kubeClientBundle: string,
): Promise<Map<string, string>> {
  // A file outside the tree (hack/run-tests.test.ts makes some) goes under outside/, numbered.
  const entryPoints = files.map((file, i) => {
    const path = relative(repoRoot, file);
    const out = path.startsWith('..') ? join('outside', `${i}-${basename(file)}`) : path;
    return { in: file, out: out.replace(/\.ts$/, '') };
  });
  await build({
    entryPoints,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Modules that several test files import go into shared chunks rather than into each bundle
    // (28 MB of bundles for the unit run become 5.6 MB): c8 then maps each chunk's coverage back
    // to the .ts files once, merged over every process that ran it, instead of once per bundle.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    absWorkingDir: repoRoot,
    logLevel: 'error',
    plugins: [ownImportMeta(), externalPackages(kubeClientBundle)],
    // Bundled CommonJS code calls require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __mooringRequire } from 'node:module'; const require = __mooringRequire(import.meta.url);",
    },
  });
  return new Map(files.map((file, i) => [file, join(outDir, `${entryPoints[i]!.out}.mjs`)]));
}
