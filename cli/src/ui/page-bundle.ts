import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CLI_DIR } from '../cli-paths.ts';

/** The page's files, served from memory: path → body and content type. */
export type PageFiles = Map<string, { body: Buffer; type: string }>;

const PAGE_DIR = join(CLI_DIR, 'ui');

/**
 * Bundles the page (cli/ui/main.ts and what it imports, npm packages included) with esbuild into
 * memory once per process: nothing is fetched when the page runs, and no build step is needed first.
 */
export async function buildPage(): Promise<PageFiles> {
  // Loaded from node_modules at run time, not bundled into cli/.bundle: esbuild's API finds its
  // native binary from its own file's path.
  const { build } = createRequire(join(CLI_DIR, 'package.json'))('esbuild') as typeof import('esbuild');
  const result = await build({
    entryPoints: [join(PAGE_DIR, 'main.ts')],
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
