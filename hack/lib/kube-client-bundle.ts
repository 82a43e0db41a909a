// The test runner's copy of @kubernetes/client-node as one CommonJS file, which every test process
// (and every operator process a test starts) loads through MOORING_KUBE_CLIENT_BUNDLE instead of
// the library's ~2,500 modules: about 0.8 s of CPU instead of 2.2 s under tsx. Built once per
// installed library version, with the esbuild call the CLI's own bundle uses.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bundleKubeClient } from '../../cli/bin/bundle.js';

export async function ensureKubeClientBundle(repoRoot: string): Promise<string> {
  const require = createRequire(join(repoRoot, 'package.json'));
  const version = (pkg: string): string =>
    (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  const dir = join(repoRoot, '.mooring/kube-client');
  const file = join(
    dir,
    `client-node-${version('@kubernetes/client-node')}-esbuild-${version('esbuild')}.cjs`,
  );
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await bundleKubeClient(tmp);
  renameSync(tmp, file);
  return file;
}
