import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function keygen(path: string, comment: string): Promise<void> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path]);
}

/**
 * An SSH Git server for tests: a private `sshd` on a free loopback port with a fresh ed25519
 * host key, key-only login for the current user, serving bare repositories by absolute path
 * (pass a GitServer's `<root>/repos` to serve the same repositories over HTTP and SSH).
 */
export class SshGitServer {
  readonly port: number;
  readonly user: string;
  readonly reposRoot: string;
  /** The client's private key (OpenSSH PEM) that the server accepts. */
  readonly clientKey: string;
  /** A known_hosts line for `[127.0.0.1]:<port>` with the server's host key. */
  readonly knownHosts: string;
  readonly #dir: string;
  readonly #sshd: ChildProcess;

  private constructor(init: {
    port: number;
    user: string;
    reposRoot: string;
    clientKey: string;
    knownHosts: string;
    dir: string;
    sshd: ChildProcess;
  }) {
    this.port = init.port;
    this.user = init.user;
    this.reposRoot = init.reposRoot;
    this.clientKey = init.clientKey;
    this.knownHosts = init.knownHosts;
    this.#dir = init.dir;
    this.#sshd = init.sshd;
  }

  /** Starts sshd in the foreground and resolves once it listens. */
  static async start(opts: { reposRoot: string }): Promise<SshGitServer> {
    // sshd refuses to start without its compiled-in privilege separation directory, which the
    // distribution's service unit normally creates; containers without that unit lack it.
    if (!existsSync('/run/sshd') && process.getuid?.() === 0) mkdirSync('/run/sshd', { mode: 0o755 });
    const dir = mkdtempSync(join(tmpdir(), 'mooring-sshd-'));
    try {
      await keygen(join(dir, 'host_ed25519'), 'mooring-test-host');
      await keygen(join(dir, 'client_ed25519'), 'mooring-test-client');
      writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_ed25519.pub')), {
        mode: 0o600,
      });
      const port = await freePort();
      const user = userInfo().username;
      const config = [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_ed25519')}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        'StrictModes no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        // Tests and CI run as root here; keys only.
        'PermitRootLogin prohibit-password',
        `AllowUsers ${user}`,
        'UsePAM no',
        // git asks for protocol v2 through this variable, as on real Git hosts.
        'AcceptEnv GIT_PROTOCOL',
        // bash sources ~/.bashrc for commands run by sshd only in a top-level shell; the user's
        // rc files (pyenv, nvm...) can cost a second per git command, so present as nested.
        'SetEnv SHLVL=1',
        'LogLevel ERROR',
        'PrintMotd no',
        'AllowTcpForwarding no',
        'X11Forwarding no',
      ];
      writeFileSync(join(dir, 'sshd_config'), `${config.join('\n')}\n`);
      const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      sshd.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      // LogLevel ERROR keeps sshd quiet, so readiness is a successful TCP connect.
      await waitForPort(port, sshd, () => stderr);
      const hostPub = readFileSync(join(dir, 'host_ed25519.pub'), 'utf8').trim().split(' ');
      return new SshGitServer({
        port,
        user,
        reposRoot: opts.reposRoot,
        clientKey: readFileSync(join(dir, 'client_ed25519'), 'utf8'),
        knownHosts: `[127.0.0.1]:${port} ${hostPub[0]} ${hostPub[1]}`,
        dir,
        sshd,
      });
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** `ssh://<user>@127.0.0.1:<port>/<reposRoot>/<name>.git`. */
  url(repoName: string): string {
    return `ssh://${this.user}@127.0.0.1:${this.port}${join(this.reposRoot, `${repoName}.git`)}`;
  }

  /** Stops sshd (and the sessions it forked) and removes the keys and config. */
  async close(): Promise<void> {
    if (this.#sshd.exitCode === null && this.#sshd.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.#sshd.once('exit', () => resolve()));
      this.#sshd.kill('SIGTERM');
      await exited;
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

async function waitForPort(port: number, sshd: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (sshd.exitCode !== null) throw new Error(`sshd exited before listening: ${stderr().trim()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  sshd.kill('SIGKILL');
  throw new Error(`sshd did not listen on port ${port} within 10 s: ${stderr().trim()}`);
}
