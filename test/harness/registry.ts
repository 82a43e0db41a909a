import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RegistryTokenServer } from './registry-token-server.ts';

const run = promisify(execFile);

/** How the test registry authenticates: nobody, htpasswd basic auth, or bearer tokens from a token server. */
export interface TestRegistryOptions {
  htpasswd?: { username: string; password: string };
  /** Token auth (needs `htpasswd` for the users the token server accepts, plus an optional identity token). */
  token?: boolean;
  identityToken?: string;
  /** Serve HTTPS with a fresh self-signed certificate for 127.0.0.1 (see `caCert`). */
  tls?: boolean;
}

// Registries still running when the process exits (a test that never reached close()) die with it.
const running = new Map<ChildProcess, string>();
process.once('exit', () => {
  for (const [proc, root] of running) {
    proc.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
});

/** A free loopback port; the tiny race until the registry binds it is acceptable in tests. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function probe(host: string, caCert: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    const url = `${caCert ? 'https' : 'http'}://${host}/v2/`;
    const onResponse = (res: http.IncomingMessage): void => {
      res.resume();
      resolve(res.statusCode ?? 0);
    };
    const req = caCert ? https.get(url, { ca: caCert }, onResponse) : http.get(url, onResponse);
    req.on('error', () => resolve(0));
    req.setTimeout(1000, () => req.destroy());
  });
}

/**
 * Debian's docker-registry (distribution 2.8.2) on a free loopback port with temporary storage, for
 * tests. Optional htpasswd or token auth; `close()` stops the process and removes every file.
 */
export class TestRegistry {
  /** `127.0.0.1:<port>`, the host part of OCI references. */
  readonly host: string;
  readonly root: string;
  /** PEM certificate to trust when started with `tls: true` (self-signed, so it is its own CA). */
  readonly caCert: string | undefined;
  /** The token server when started with `token: true`. */
  readonly tokenServer: RegistryTokenServer | undefined;
  readonly #proc: ChildProcess;

  private constructor(
    host: string,
    root: string,
    proc: ChildProcess,
    tokenServer: RegistryTokenServer | undefined,
    caCert: string | undefined,
  ) {
    this.host = host;
    this.caCert = caCert;
    this.root = root;
    this.#proc = proc;
    this.tokenServer = tokenServer;
  }

  /** Writes the config, starts `docker-registry serve` and waits until `/v2/` answers. */
  static async start(opts: TestRegistryOptions = {}): Promise<TestRegistry> {
    const root = mkdtempSync(join(tmpdir(), 'mooring-registry-'));
    let tokenServer: RegistryTokenServer | undefined;
    let proc: ChildProcess | undefined;
    try {
      mkdirSync(join(root, 'data'));
      const port = await freePort();
      const host = `127.0.0.1:${port}`;
      const lines = [
        'version: 0.1',
        'log:',
        '  level: error',
        '  accesslog:',
        '    disabled: true',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${join(root, 'data')}`,
        '  delete:',
        '    enabled: true',
        'http:',
        `  addr: ${host}`,
      ];
      if (opts.token) {
        if (!opts.htpasswd)
          throw new Error('TestRegistry token auth needs htpasswd users for the token server.');
        tokenServer = await RegistryTokenServer.start(root, {
          ...opts.htpasswd,
          ...(opts.identityToken ? { identityToken: opts.identityToken } : {}),
        });
        lines.push(
          'auth:',
          '  token:',
          `    realm: ${tokenServer.realm}`,
          `    service: ${tokenServer.service}`,
          `    issuer: ${tokenServer.issuer}`,
          `    rootcertbundle: ${tokenServer.rootCertBundle}`,
        );
      } else if (opts.htpasswd) {
        const { stdout } = await run('htpasswd', ['-Bbn', opts.htpasswd.username, opts.htpasswd.password]);
        writeFileSync(join(root, 'htpasswd'), stdout);
        lines.push('auth:', '  htpasswd:', '    realm: mooring-test', `    path: ${join(root, 'htpasswd')}`);
      }
      let caCert: string | undefined;
      if (opts.tls) {
        const key = join(root, 'tls.key');
        const cert = join(root, 'tls.crt');
        await run('openssl', [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '2',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ]);
        caCert = readFileSync(cert, 'utf8');
        // Nested under `http:`, right after its `addr`.
        lines.splice(
          lines.indexOf(`  addr: ${host}`) + 1,
          0,
          '  tls:',
          `    certificate: ${cert}`,
          `    key: ${key}`,
        );
      }
      const config = join(root, 'config.yml');
      writeFileSync(config, `${lines.join('\n')}\n`);

      proc = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
      const spawned = proc;
      running.set(spawned, root);
      spawned.once('exit', () => running.delete(spawned));
      let stderr = '';
      proc.stderr?.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      const deadline = Date.now() + 15_000;
      for (;;) {
        if (proc.exitCode !== null) {
          throw new Error(`docker-registry exited with code ${proc.exitCode}: ${stderr.trim()}`);
        }
        const status = await probe(host, caCert);
        if (status === 200 || status === 401) return new TestRegistry(host, root, proc, tokenServer, caCert);
        if (Date.now() > deadline) {
          throw new Error(`docker-registry did not answer on ${host} within 15s: ${stderr.trim()}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (err) {
      if (proc) await stop(proc);
      await tokenServer?.close();
      rmSync(root, { recursive: true, force: true });
      throw err;
    }
  }

  /** `oci://<host>/<repository>`. */
  url(repository: string): string {
    return `oci://${this.host}/${repository}`;
  }

  /** Stops the registry (and token server) and removes the storage. */
  async close(): Promise<void> {
    await stop(this.#proc);
    await this.tokenServer?.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}
