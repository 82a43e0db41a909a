import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The CLI package's folder, found by walking up to its package.json. The sources and the bundle
 * (cli/.bundle/, see cli/bin/mooring.js) sit at different depths, so a fixed `../..` would be
 * right for only one of them.
 */
function findCliDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === '@mooring/cli') return dir;
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the @mooring/cli package folder above the CLI');
    dir = parent;
  }
}

export const CLI_DIR = findCliDir();

/** The repository the CLI runs from: `config/` (the install manifests) lives here. */
export const REPO_ROOT = dirname(CLI_DIR);
