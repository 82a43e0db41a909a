import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The page's files, served from memory: path → body and content type. */
export type PageFiles = Map<string, { body: Buffer; type: string }>;

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** The page prebuilt into `dir` (the operator image's, where no esbuild is): every file by name. */
async function prebuiltPage(dir: string): Promise<PageFiles> {
  const files: PageFiles = new Map();
  for (const name of await readdir(dir)) {
    const type = TYPES[name.split('.').pop() ?? ''];
    if (type)
      files.set(name === 'index.html' ? '/' : `/${name}`, { body: await readFile(join(dir, name)), type });
  }
  return files;
}

/** Writes the page's files into `dir`, as `prebuiltPage` reads them (the image build does). */
export async function writePage(dir: string): Promise<void> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(dir, { recursive: true });
  for (const [path, file] of await buildPage())
    await writeFile(join(dir, path === '/' ? 'index.html' : path.slice(1)), file.body);
}

/**
 * Bundles the page (cli/ui/main.ts and what it imports, npm packages included) with esbuild into
 * memory once per process: nothing is fetched when the page runs, and no build step is needed first.
 */
export async function buildPage(): Promise<PageFiles> {
  if (process.env.MOORING_UI_PAGE_DIR) return prebuiltPage(process.env.MOORING_UI_PAGE_DIR);
  // Imported here, not at the top: outside a checkout (the image) there is no CLI folder to find.
  const { CLI_DIR } = await import('../cli-paths.ts');
  const PAGE_DIR = join(CLI_DIR, 'ui');
  // Loaded from node_modules at run time, not bundled into cli/.bundle: esbuild's API finds its
  // native binary from its own file's path.
  const { build } = createRequire(join(CLI_DIR, 'package.json'))('esbuild') as typeof import('esbuild');
  const result = await build({
    // The graph's layout runs in a worker of its own file.
    entryPoints: [join(PAGE_DIR, 'main.ts'), join(PAGE_DIR, 'graph-layout-worker.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    write: false,
    logLevel: 'silent',
    outdir: '/out',
  });
  const files: PageFiles = new Map();
  for (const out of result.outputFiles)
    files.set(`/${out.path.split('/').pop()}`, {
      body: Buffer.from(out.contents),
      type: 'text/javascript; charset=utf-8',
    });
  files.set('/', { body: await readFile(join(PAGE_DIR, 'index.html')), type: 'text/html; charset=utf-8' });
  files.set('/style.css', {
    body: await readFile(join(PAGE_DIR, 'style.css')),
    type: 'text/css; charset=utf-8',
  });
  return files;
}
