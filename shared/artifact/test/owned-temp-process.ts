import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface TempOwningProcess {
  pid: number;
  /** The directory it made, and the extraction scratch beside it. */
  dir: string;
  scratch: string;
  /** SIGKILLs it (no cleanup runs) and resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts a process that makes owned temp directories of `kind` in `parent` and then waits. */
export async function startTempOwner(parent: string, kind = 'artifact'): Promise<TempOwningProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'owned-temp-child.ts'), parent, kind],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`temp-owning child exited early (${code})`)));
  });
  lines.close();
  const { dir, scratch } = JSON.parse(first) as { dir: string; scratch: string };
  return {
    pid: child.pid!,
    dir,
    scratch,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
