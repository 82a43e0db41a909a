import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The entry users run (`npx mooring`): the bundle, rebuilt when a source changed.
const MAIN = fileURLToPath(new URL('../bin/mooring.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mooring <args>` as users do, in its own process, and collects what it printed. */
export function mooring(
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    input?: string;
    cwd?: string;
    /** Close the reading end of stdout at once, as `mooring … | head` does once it has its lines. */
    closeStdout?: boolean;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    if (opts.closeStdout) child.stdout.destroy();
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** The path of the CLI entry (`node CLI_MAIN …`), for tests that manage the process themselves. */
export const CLI_MAIN = MAIN;
