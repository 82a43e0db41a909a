import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A loopback port that was free a moment ago (the caller retries if another process takes it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts a program that outlives this process, its output appended to `logFile`; `env` adds to
 * (or overrides) this process's environment.
 */
export function startDetached(
  binary: string,
  args: string[],
  logFile: string,
  env?: Record<string, string>,
): number {
  const log = openSync(logFile, 'a');
  try {
    const child = spawn(binary, args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: env ? { ...process.env, ...env } : process.env,
    });
    if (child.pid === undefined) throw new Error(`could not start ${binary}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** True when `pid` is alive and runs `binary`: a recycled pid of another program is never ours. */
export function isOurProcess(pid: number, binary: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.split('\0')[0] === binary;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopProcess(pid: number, binary: string, graceMs = 10_000): Promise<void> {
  if (!isOurProcess(pid, binary)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isOurProcess(pid, binary) || isZombie(pid)) return;
    await sleep(50);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The last `lines` lines of a log, for an error message. */
export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
