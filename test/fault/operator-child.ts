// The kustomize operator as a process of its own, so a fault test can kill -9 it mid-apply. It
// runs from an esbuild bundle of the all-in-one entry (built once per test process, like the
// CLI's): through tsx each start would transpile for seconds, and the trials start it many times.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../hack/lib/control-plane.ts';

const BUNDLE_DIR = join(repoRoot, '.mooring', 'fault-operators');
const BUNDLE = join(BUNDLE_DIR, `operators-${process.pid}.mjs`);
// Read at run time beside the module that reads it (import.meta.url), as the CLI bundle does.
const ASSETS = ['shared/kustomize/src/smp/merge-keys.json'];

let built: Promise<string> | undefined;

/** Bundles operators/all-in-one once for this process and returns the bundle's path. */
export function operatorBundle(): Promise<string> {
  built ??= (async () => {
    const { build } = await import('esbuild');
    mkdirSync(BUNDLE_DIR, { recursive: true });
    await build({
      entryPoints: [join(repoRoot, 'operators/all-in-one/src/main.ts')],
      outfile: BUNDLE,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      absWorkingDir: repoRoot,
      logLevel: 'silent',
      banner: {
        js: "import { createRequire as __mooringRequire } from 'node:module'; const require = __mooringRequire(import.meta.url);",
      },
    });
    for (const asset of ASSETS)
      copyFileSync(join(repoRoot, asset), join(BUNDLE_DIR, asset.split('/').pop()!));
    return BUNDLE;
  })();
  return built;
}

export interface OperatorChild {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** kill -9: no shutdown hook runs, nothing is flushed. */
  kill(): Promise<void>;
}

/** Starts `--only <operators>` watching `namespace`, with stderr kept for a failing test to show. */
export async function startOperatorChild(
  kubeconfig: string,
  namespace: string,
  only: string,
  args: string[] = [],
): Promise<OperatorChild> {
  const bundle = await operatorBundle();
  const child = spawn(
    process.execPath,
    [
      '--enable-source-maps',
      bundle,
      '--only',
      only,
      '--kubeconfig',
      kubeconfig,
      '--watch-namespace',
      namespace,
      '--metrics-addr',
      '127.0.0.1:0',
      '--health-addr',
      '127.0.0.1:0',
      '--log-level',
      'error',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
