import { execFile } from 'node:child_process';
import { createPrivateKey, type KeyObject, randomUUID, sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Who may get a token: basic credentials, and optionally a refresh token (`identityToken`). */
export interface TokenServerUsers {
  username: string;
  password: string;
  /** Accepted as `refresh_token` on the OAuth2 POST flow, like `docker login`'s identity token. */
  identityToken?: string;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * A real token server for docker-registry's `auth.token` mode (the distribution token spec): checks
 * basic credentials (GET) or a refresh token (POST), grants exactly the requested scopes, and signs
 * an ES256 JWT whose `x5c` header carries a self-signed certificate that the registry trusts through
 * its `rootcertbundle`. Hand-written because no npm token-server fits a test harness; the crypto is
 * node:crypto's and the certificate comes from the openssl CLI.
 */
export class RegistryTokenServer {
  readonly realm: string;
  readonly service = 'mooring-test-registry';
  readonly issuer = 'mooring-test-token-issuer';
  /** PEM bundle path for the registry's `auth.token.rootcertbundle`. */
  readonly rootCertBundle: string;
  /** Tokens issued so far, so a test can assert that the client caches them. */
  issued = 0;
  /** Requests refused for bad or missing credentials. */
  refused = 0;
  /** Token lifetime reported as `expires_in`. */
  expiresInSeconds = 300;
  readonly #server: http.Server;
  readonly #key: KeyObject;
  readonly #certDer: string;
  readonly #users: TokenServerUsers;

  private constructor(
    server: http.Server,
    dir: string,
    key: KeyObject,
    certDer: string,
    users: TokenServerUsers,
  ) {
    this.#server = server;
    this.#key = key;
    this.#certDer = certDer;
    this.#users = users;
    this.rootCertBundle = join(dir, 'token-cert.pem');
    const { port } = server.address() as AddressInfo;
    this.realm = `http://127.0.0.1:${port}/token`;
  }

  /** Makes a key and certificate in `dir` and listens on a free loopback port. */
  static async start(dir: string, users: TokenServerUsers): Promise<RegistryTokenServer> {
    const keyPath = join(dir, 'token-key.pem');
    const certPath = join(dir, 'token-cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=mooring-test-token-issuer',
    ]);
    const key = createPrivateKey(readFileSync(keyPath));
    const certDer = new X509Certificate(readFileSync(certPath)).raw.toString('base64');
    let self: RegistryTokenServer | undefined;
    const server = http.createServer((req, res) => {
      self?.handle(req, res).catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new RegistryTokenServer(server, dir, key, certDer, users);
    return self;
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    let params = url.searchParams;
    let allowed = false;
    if (req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      params = new URLSearchParams(body);
      const grant = params.get('grant_type');
      allowed =
        (grant === 'refresh_token' &&
          this.#users.identityToken !== undefined &&
          params.get('refresh_token') === this.#users.identityToken) ||
        (grant === 'password' &&
          params.get('username') === this.#users.username &&
          params.get('password') === this.#users.password);
    } else {
      const expected = `Basic ${Buffer.from(`${this.#users.username}:${this.#users.password}`).toString('base64')}`;
      allowed = req.headers.authorization === expected;
    }
    if (!allowed) {
      this.refused++;
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
      return;
    }
    if (params.get('service') !== this.service) {
      res.writeHead(400).end('unknown service');
      return;
    }
    const token = this.#sign(params.getAll('scope').flatMap((s) => s.split(' ')));
    this.issued++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: this.expiresInSeconds,
        issued_at: new Date().toISOString(),
      }),
    );
  }

  #sign(scopes: string[]): string {
    const access = scopes
      .filter((s) => s.length > 0)
      .map((scope) => {
        // `repository:<name>:<actions>`; names may not contain ':' but keep the middle whole anyway.
        const first = scope.indexOf(':');
        const last = scope.lastIndexOf(':');
        return {
          type: scope.slice(0, first),
          name: scope.slice(first + 1, last),
          actions: scope.slice(last + 1).split(','),
        };
      });
    const now = Math.floor(Date.now() / 1000);
    const header = { typ: 'JWT', alg: 'ES256', x5c: [this.#certDer] };
    const claims = {
      iss: this.issuer,
      sub: this.#users.username,
      aud: this.service,
      exp: now + this.expiresInSeconds,
      nbf: now - 1,
      iat: now,
      jti: randomUUID(),
      access,
    };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    // JWS ES256 wants the raw r||s signature, not DER.
    const signature = sign('sha256', Buffer.from(input), { key: this.#key, dsaEncoding: 'ieee-p1363' });
    return `${input}.${b64url(signature)}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
