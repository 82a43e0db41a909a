import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { confirm } from './confirm.ts';

/** Where an `ssh://` URL points; `display` is `host:port`, as errors name it. */
export interface SshRemote {
  host: string;
  port: number;
  display: string;
}

/** What bootstrap needs to push over SSH and to give the cluster: Flux's Secret keys, decrypted. */
export interface SshAccess {
  remote: SshRemote;
  /** The private key, without a passphrase: shared/git reads `identity` as it is. */
  identity: string;
  /** `<type> <base64> [comment]`, as `ssh-keygen -y` prints it. */
  publicKey: string;
  /** `SHA256:…`, as Git hosts show deploy keys. */
  keyFingerprint: string;
  knownHosts: string;
  /** Where the host key came from, for the mismatch sentence. */
  knownHostsSource: string;
}

/** The SSH remote of `url`; undefined for other schemes; a usage error for the scp form. */
export function sshRemoteOf(url: string): SshRemote | undefined {
  if (/^[^/:]+@[^/:]+:/.test(url) && !url.includes('://')) {
    const [userHost, path] = [url.slice(0, url.indexOf(':')), url.slice(url.indexOf(':') + 1)];
    throw new CliError(
      `${url} is an scp-style address, which bootstrap does not take: write it as ssh://${userHost}/${path.replace(/^\/+/, '')}.`,
      EXIT_ERROR,
    );
  }
  if (!url.startsWith('ssh://')) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`${url} is not a valid URL: use ssh://git@host[:port]/path.`, EXIT_ERROR);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  // A host that starts with '-' would be read as an option by ssh and ssh-keyscan.
  if (!host || host.startsWith('-') || parsed.pathname.length < 2)
    throw new CliError(`${url} names no host or no path: use ssh://git@host[:port]/path.`, EXIT_ERROR);
  if (parsed.password)
    throw new CliError(
      'an ssh:// URL cannot carry a password: authenticate with --private-key-file.',
      EXIT_ERROR,
    );
  const port = parsed.port ? Number(parsed.port) : 22;
  return { host, port, display: `${host.includes(':') ? `[${host}]` : host}:${port}` };
}

/** `SHA256:…` of a public key blob (base64), as `ssh-keygen -l` prints it. */
export function fingerprintOf(keyBase64: string): string {
  const digest = createHash('sha256').update(Buffer.from(keyBase64, 'base64')).digest('base64');
  return `SHA256:${digest.replace(/=+$/, '')}`;
}

/** The host keys in known_hosts text: type and fingerprint of each entry. */
export function hostKeysOf(knownHosts: string): { type: string; fingerprint: string }[] {
  return knownHosts
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(/\s+/).filter((f) => !f.startsWith('@')))
    .filter((fields) => fields.length >= 3)
    .map((fields) => ({ type: fields[1]!, fingerprint: fingerprintOf(fields[2]!) }));
}

interface ToolRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs an OpenSSH tool; a missing tool is a sentence, any other failure is returned. */
function runTool(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          reject(
            new CliError(
              `${file} is not installed: install the OpenSSH client tools and run bootstrap again.`,
            ),
          );
        else resolve({ ok: !err, stdout, stderr });
      },
    );
  });
}

/** The first line a tool printed, to quote in a sentence (never key material: ssh tools do not print it). */
export function firstLine(text: string): string {
  return (
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find(Boolean)
      ?.replace(/\.$/, '') ?? 'no output'
  );
}

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  // mkdtemp makes the directory 0700: key files in it are the user's alone.
  const dir = await mkdtemp(join(tmpdir(), 'mooring-ssh-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface SshKey {
  identity: string;
  publicKey: string;
}

/**
 * Reads a private key and derives its public key with ssh-keygen. An encrypted key is decrypted
 * with `passphrase`, which reaches ssh-keygen through SSH_ASKPASS (an environment variable of the
 * askpass child), never argv; the cluster's Secret then holds the decrypted key, as shared/git reads it.
 */
export async function loadPrivateKey(text: string, source: string, passphrase?: string): Promise<SshKey> {
  return inTempDir(async (dir) => {
    const file = join(dir, 'identity');
    await writeFile(file, `${text.trim()}\n`, { mode: 0o600 });
    // An empty -P tells an unencrypted key (read) from an encrypted one (refused) without a prompt.
    let pub = await runTool('ssh-keygen', ['-y', '-P', '', '-f', file]);
    if (!pub.ok && /incorrect passphrase/i.test(pub.stderr)) {
      if (!passphrase)
        throw new CliError(
          `the private key ${source} is passphrase-protected: pass its passphrase with --password or $MOORING_GIT_PASSWORD.`,
        );
      const askpass = join(dir, 'askpass');
      await writeFile(askpass, '#!/bin/sh\nprintf \'%s\\n\' "$MOORING_SSH_PASSPHRASE"\n', { mode: 0o700 });
      const decrypted = await runTool('ssh-keygen', ['-p', '-N', '', '-f', file], {
        SSH_ASKPASS: askpass,
        SSH_ASKPASS_REQUIRE: 'force',
        MOORING_SSH_PASSPHRASE: passphrase,
      });
      if (!decrypted.ok)
        throw new CliError(
          `the passphrase does not decrypt the private key ${source}: check --password or $MOORING_GIT_PASSWORD.`,
        );
      pub = await runTool('ssh-keygen', ['-y', '-P', '', '-f', file]);
    }
    if (!pub.ok)
      throw new CliError(
        `${source} is not a private key ssh can use (${firstLine(pub.stderr).replace(file, source)}): pass a PEM or OpenSSH private key with --private-key-file.`,
      );
    return { identity: await readFile(file, 'utf8'), publicKey: pub.stdout.trim() };
  });
}

/** A new ed25519 key pair, made by ssh-keygen without a passphrase. */
export async function generateKey(comment: string): Promise<SshKey> {
  return inTempDir(async (dir) => {
    const file = join(dir, 'identity');
    const made = await runTool('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
    if (!made.ok)
      throw new CliError(
        `ssh-keygen could not make a key (${firstLine(made.stderr)}): pass --private-key-file.`,
      );
    return {
      identity: await readFile(file, 'utf8'),
      publicKey: (await readFile(`${file}.pub`, 'utf8')).trim(),
    };
  });
}

/** The remote's host keys as known_hosts lines, read with ssh-keyscan. */
export async function scanHostKeys(remote: SshRemote): Promise<string> {
  const scan = await runTool('ssh-keyscan', ['-T', '10', '-p', String(remote.port), '--', remote.host]);
  const lines = scan.stdout.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  if (lines.length === 0)
    throw new CliError(
      `ssh-keyscan read no host key from ${remote.display}: check the URL's host and port, or pass --known-hosts-file.`,
    );
  return `${lines.join('\n')}\n`;
}

export interface SshAccessOptions {
  url: string;
  remote: SshRemote;
  privateKeyFile?: string;
  passphrase?: string;
  knownHostsFile?: string;
  /** A key already in the cluster's Secret, reused so a rerun needs no new deploy key. */
  existingIdentity?: string;
  yes?: boolean;
}

/**
 * Gathers the host key and the client key, telling the user what to check: the scanned host
 * key's fingerprint, and for a new key the public key to add as a deploy key before going on.
 */
export async function prepareSshAccess(opts: SshAccessOptions): Promise<SshAccess> {
  let knownHosts: string;
  let knownHostsSource: string;
  if (opts.knownHostsFile) {
    knownHosts = await readFile(opts.knownHostsFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(
        `cannot read ${opts.knownHostsFile} (${err.code ?? err.message}): check --known-hosts-file.`,
      );
    });
    if (hostKeysOf(knownHosts).length === 0)
      throw new CliError(
        `${opts.knownHostsFile} holds no host key: pass a known_hosts file with --known-hosts-file.`,
      );
    knownHostsSource = opts.knownHostsFile;
  } else {
    knownHosts = await scanHostKeys(opts.remote);
    knownHostsSource = 'the scanned host key';
    for (const key of hostKeysOf(knownHosts))
      process.stderr.write(
        `► ${opts.remote.display} presents ${key.type} ${key.fingerprint}: compare it with the fingerprint your Git host publishes\n`,
      );
  }

  let key: SshKey;
  if (opts.privateKeyFile) {
    const file = opts.privateKeyFile;
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(
        `cannot read the private key ${file} (${err.code ?? err.message}): check --private-key-file.`,
      );
    });
    key = await loadPrivateKey(text, file, opts.passphrase);
  } else if (opts.existingIdentity) {
    key = await loadPrivateKey(opts.existingIdentity, 'in Secret mooring-system/mooring-system');
    process.stderr.write(
      `► using the SSH key ${keyFingerprint(key)} from Secret mooring-system/mooring-system\n`,
    );
  } else {
    key = await generateKey('mooring');
    process.stdout.write(
      `✔ generated an SSH key: add this public key to ${opts.url} as a deploy key with write access\n${key.publicKey}\n`,
    );
    await confirm('have you added the deploy key with write access?', opts.yes);
  }
  return {
    remote: opts.remote,
    identity: key.identity,
    publicKey: key.publicKey,
    keyFingerprint: keyFingerprint(key),
    knownHosts,
    knownHostsSource,
  };
}

function keyFingerprint(key: SshKey): string {
  return fingerprintOf(key.publicKey.split(/\s+/)[1] ?? '');
}

function quoteForShell(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `fn` with the environment git needs to use `access`: the key and known_hosts in 0600 files
 * (removed afterwards), strict host-key checking, no agent keys, no prompts, no user ssh config.
 */
export async function withGitSsh<T>(
  access: SshAccess,
  fn: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  return inTempDir(async (dir) => {
    const identity = join(dir, 'identity');
    const knownHosts = join(dir, 'known_hosts');
    await writeFile(identity, `${access.identity.trim()}\n`, { mode: 0o600 });
    await writeFile(knownHosts, `${access.knownHosts.trim()}\n`, { mode: 0o600 });
    const command = [
      'ssh',
      '-F /dev/null',
      `-i ${quoteForShell(identity)}`,
      '-o IdentitiesOnly=yes',
      '-o IdentityAgent=none',
      `-o UserKnownHostsFile=${quoteForShell(knownHosts)}`,
      '-o GlobalKnownHostsFile=/dev/null',
      '-o StrictHostKeyChecking=yes',
      '-o BatchMode=yes',
      '-o ConnectTimeout=30',
    ].join(' ');
    return fn({ GIT_SSH_COMMAND: command, GIT_SSH_VARIANT: 'ssh' });
  });
}

/** The sentence for a git-over-ssh failure that is about a key: the host's, or the deploy key. */
export function sshFailureSentence(stderr: string, access: SshAccess): string | undefined {
  if (/Host key verification failed/i.test(stderr)) {
    const sent = /key sent by the remote host is\s+(SHA256:[A-Za-z0-9+/]+)/.exec(stderr)?.[1];
    return `the host key of ${access.remote.display} does not match ${access.knownHostsSource}${sent ? ` (the server sent ${sent})` : ''}: check --known-hosts-file against the fingerprint your Git host publishes.`;
  }
  // OpenSSH's refusal, and what GitHub and GitLab answer a push with a read-only deploy key.
  if (/Permission denied \(publickey|marked as read only|does not have write access/i.test(stderr))
    return `the server refused the key: add ${access.keyFingerprint} as a deploy key with write access, then run bootstrap again.`;
  return undefined;
}
