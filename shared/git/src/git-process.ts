import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { curlConnectFailure, sshConnectFailure } from './connect-failure.ts';
import { GitAuthError, GitError, GitRefNotFoundError, GitTimeoutError, PushRejectedError } from './errors.ts';
import type { GitAuth, GitOperationOptions } from './git-client.ts';
import { redactText, redactUrl, secretsOf } from './redact.ts';

/** One git invocation's outcome. */
export interface GitRun {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Everything one client call shares across its git commands: environment, deadline, what to redact. */
export interface GitOp {
  env: NodeJS.ProcessEnv;
  deadline: number;
  /** The budget `deadline` was set from, for messages. */
  timeoutMs: number;
  signal?: AbortSignal;
  secrets: string[];
  displayUrl: string;
}

/** Checks the URL is one git may use here and cannot be read as an option. */
export function checkUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GitError(`The Git URL ${JSON.stringify(redactUrl(url))} is not a valid URL.`);
  }
  if (!['http:', 'https:', 'ssh:'].includes(parsed.protocol))
    throw new GitError(`The Git URL scheme ${parsed.protocol} is not supported; use http, https or ssh.`);
  return parsed;
}

function quoteForShell(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `fn` with an environment that isolates git from the machine's config and carries the
 * credentials; temp files (mode 0600) holding keys and CAs are removed afterwards.
 */
export async function withGitOp<T>(
  url: string | undefined,
  opts: Partial<GitOperationOptions>,
  fn: (op: GitOp) => Promise<T>,
): Promise<T> {
  const auth: GitAuth = opts.auth ?? {};
  const tmp = mkdtempSync(join(tmpdir(), 'mooring-git-op-'));
  try {
    const config: Array<[string, string]> = [
      ['protocol.version', '2'],
      ['advice.detachedHead', 'false'],
      ['init.defaultBranch', 'main'],
      ['core.hooksPath', '/dev/null'],
      ['commit.gpgSign', 'false'],
      ['tag.gpgSign', 'false'],
    ];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: tmp,
      LANG: 'C',
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ALLOW_PROTOCOL: 'http:https:ssh',
      GIT_SSH_VARIANT: 'ssh',
    };
    // Secrets travel through GIT_CONFIG_* env entries, never argv, so `ps` does not show them.
    if (auth.bearerToken) config.push(['http.extraHeader', `Authorization: Bearer ${auth.bearerToken}`]);
    else if (auth.username !== undefined || auth.password !== undefined) {
      const basic = Buffer.from(`${auth.username ?? ''}:${auth.password ?? ''}`).toString('base64');
      config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
    }
    if (auth.caCert) {
      const ca = join(tmp, 'ca.pem');
      writeFileSync(ca, auth.caCert, { mode: 0o600 });
      config.push(['http.sslCAInfo', ca]);
    }
    if (url?.startsWith('ssh:') || auth.sshIdentity) {
      if (!auth.sshKnownHosts)
        throw new GitError('SSH access needs known_hosts in the Git credentials to check the host key.');
      const knownHosts = join(tmp, 'known_hosts');
      writeFileSync(knownHosts, `${auth.sshKnownHosts.trim()}\n`, { mode: 0o600 });
      const parts = [
        'ssh',
        '-F /dev/null',
        '-o IdentitiesOnly=yes',
        `-o UserKnownHostsFile=${quoteForShell(knownHosts)}`,
        '-o GlobalKnownHostsFile=/dev/null',
        '-o StrictHostKeyChecking=yes',
        '-o BatchMode=yes',
        '-o ConnectTimeout=30',
      ];
      if (auth.sshIdentity) {
        const key = join(tmp, 'identity');
        writeFileSync(key, `${auth.sshIdentity.trim()}\n`, { mode: 0o600 });
        parts.push(`-i ${quoteForShell(key)}`);
      }
      env.GIT_SSH_COMMAND = parts.join(' ');
    }
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const op: GitOp = {
      env,
      deadline: Date.now() + timeoutMs,
      timeoutMs,
      secrets: secretsOf(auth, url),
      displayUrl: url ? redactUrl(url) : '',
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    return await fn(op);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Runs one git command without a shell; kills its whole process group on timeout or abort. */
export function runGit(
  op: GitOp,
  args: string[],
  opts: { cwd?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const remaining = op.deadline - Date.now();
    if (op.signal?.aborted || remaining <= 0) {
      reject(timeoutError(op, op.signal?.aborted ? 'abort' : 'timeout'));
      return;
    }
    const child = spawn('git', args, {
      cwd: opts.cwd,
      env: { ...op.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so a timeout also kills ssh and git's helpers.
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // What stopped it first: the deadline or the caller's signal; the message says which.
    let killedBy: StopCause | undefined;
    const killFor = (cause: StopCause) => {
      killedBy ??= cause;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const kill = () => killFor('abort');
    const timer = setTimeout(() => killFor('timeout'), remaining);
    op.signal?.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input);
    child.on('error', (e) => {
      clearTimeout(timer);
      op.signal?.removeEventListener('abort', kill);
      reject(new GitError(`Could not start git: ${e.message}.`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      op.signal?.removeEventListener('abort', kill);
      if (killedBy) reject(timeoutError(op, killedBy));
      else
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          code,
        });
    });
  });
}

type StopCause = 'timeout' | 'abort';

function timeoutError(op: GitOp, cause: StopCause): GitTimeoutError {
  const why = cause === 'abort' ? 'was aborted' : `timed out after ${op.timeoutMs} ms`;
  return new GitTimeoutError(`Git operation on ${op.displayUrl || 'the local repository'} ${why}.`);
}

/** Runs git and throws a classified, redacted error when it fails; resolves to stdout. */
export async function gitOk(
  op: GitOp,
  what: string,
  args: string[],
  opts: { cwd?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv; ref?: string } = {},
): Promise<string> {
  const run = await runGit(op, args, opts);
  if (run.code !== 0) throw classifyFailure(op, what, run.stderr, opts.ref);
  return run.stdout;
}

const AUTH =
  /Authentication failed|HTTP (?:code )?40[13]|returned error: 40[13]|could not read (?:Username|Password)|Permission denied|Host key verification failed|host key|IDENTIFICATION HAS CHANGED/i;
const NOT_FOUND =
  /couldn't find remote ref|Remote branch .* not found|not our ref|unadvertised object|no such remote ref/i;
const REJECTED = /\[rejected\]|non-fast-forward|fetch first|stale info/i;

/** Turns git's stderr into one typed, one-sentence error with credentials removed. */
export function classifyFailure(op: GitOp, what: string, stderr: string, ref?: string): GitError {
  const clean = redactText(stderr, op.secrets);
  const lines = clean
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('hint:') && !l.startsWith('warning:'));
  const detailLine =
    lines.find((l) => /host key/i.test(l)) ??
    lines.filter((l) => /^(fatal|error|remote|ERROR|!)/.test(l) || /rejected/.test(l)).pop() ??
    lines.pop() ??
    'no error output';
  const detail = detailLine.replace(/^(fatal|error):\s*/i, '').replace(/[.\s]+$/, '');
  const where = op.displayUrl ? ` on ${op.displayUrl}` : '';
  // Before the other checks: git never reached the server, so nothing else can have happened.
  const unreachable = sshConnectFailure(lines) ?? curlConnectFailure(lines);
  if (unreachable) return new GitError(`Git ${what}${where} failed: ${unreachable}.`);
  if (AUTH.test(clean))
    return new GitAuthError(`Git authentication failed${where} during ${what}: ${detail}.`);
  if (REJECTED.test(clean)) return new PushRejectedError(`Git push${where} was rejected: ${detail}.`);
  if (NOT_FOUND.test(clean) && ref)
    return new GitRefNotFoundError(`Git ${ref} was not found${where}: ${detail}.`, ref);
  return new GitError(`Git ${what}${where} failed: ${detail}.`);
}
