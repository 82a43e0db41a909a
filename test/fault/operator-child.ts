// The kustomize operator as a process of its own, so a fault test can kill -9 it mid-apply. It
// runs from the bundle the operator image ships (hack/lib/bundle-operators.ts, built once per test
// process): through tsx each start would transpile for seconds, and the trials start it many times.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleOperators } from '../../hack/lib/bundle-operators.ts';
import { repoRoot } from '../../hack/lib/control-plane.ts';

// An app directory of this process's own (the image's /app layout), so concurrent test processes
// never rebuild each other's bundles underfoot.
const APP_DIR = join(repoRoot, '.mooring', 'fault-operators', `app-${process.pid}`);

let built: Promise<string> | undefined;

/** Bundles the operators once for this process, as the image ships them; returns the all-in-one's path. */
export function operatorBundle(): Promise<string> {
  if (!built) {
    built = bundleOperators(APP_DIR).then((r) => join(r.appDir, 'dist', 'all-in-one.mjs'));
    // About 30 MB a process: gone with it.
    process.once('exit', () => rmSync(APP_DIR, { recursive: true, force: true }));
  }
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
