import type http from 'node:http';
import type { RegistryCredentials } from './docker-config.ts';
import { RegistryAuthError, RegistryProtocolError, RegistryUnavailableError } from './errors.ts';
import { readBody, readErrorBody } from './http.ts';
import { type AuthChallenge, parseWwwAuthenticate } from './www-authenticate.ts';

/** Sends a request to a token realm; the client supplies timeouts, CA and error mapping. */
export type TokenSender = (init: {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
}) => Promise<http.IncomingMessage>;

interface CachedToken {
  header: string;
  expiresAt: number;
}

const MAX_TOKEN_RESPONSE = 1024 * 1024;
// The distribution token spec: a token without expires_in lives 60 s.
const DEFAULT_EXPIRES_IN = 60;

function basic(creds: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${creds.username ?? ''}:${creds.password ?? ''}`).toString('base64')}`;
}

/**
 * Registry authentication per the distribution spec: remembers which scheme each host asked for,
 * answers Basic challenges with the credentials, and for Bearer challenges fetches a token from the
 * realm (basic auth on GET, or the identity token as OAuth2 refresh_token on POST), caching it per
 * host and scope until it expires. Messages name the host and never a secret.
 */
export class Authenticator {
  readonly #creds: RegistryCredentials | undefined;
  readonly #allowHttpRealm: boolean;
  readonly #basicHosts = new Set<string>();
  readonly #tokens = new Map<string, CachedToken>();

  constructor(credentials: RegistryCredentials | undefined, allowHttpRealm: boolean) {
    this.#creds = credentials;
    this.#allowHttpRealm = allowHttpRealm;
  }

  /** An Authorization header to send up front, from what this host asked for before. */
  cached(host: string, scope: string): string | undefined {
    if (this.#basicHosts.has(host) && this.#hasBasic()) return basic(this.#creds!);
    const token = this.#tokens.get(`${host} ${scope}`);
    if (token && token.expiresAt > Date.now()) return token.header;
    if (token) this.#tokens.delete(`${host} ${scope}`);
    return undefined;
  }

  /** Forgets cached auth for a scope after the registry refused it. */
  forget(host: string, scope: string): void {
    this.#tokens.delete(`${host} ${scope}`);
  }

  #hasBasic(): boolean {
    return this.#creds?.username !== undefined || this.#creds?.password !== undefined;
  }

  /** Answers a 401's WWW-Authenticate header with a fresh Authorization header, or throws RegistryAuthError. */
  async answer(
    host: string,
    scope: string,
    wwwAuthenticate: string | undefined,
    send: TokenSender,
  ): Promise<string> {
    const challenges = parseWwwAuthenticate(wwwAuthenticate ?? '');
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    if (bearer) return this.#bearer(host, scope, bearer, send);
    if (challenges.some((c) => c.scheme === 'basic')) {
      if (!this.#hasBasic()) {
        throw new RegistryAuthError(
          this.#creds?.identityToken
            ? `registry ${host} asks for a username and password, but only an identity token was given.`
            : `registry ${host} requires authentication and no credentials were given.`,
        );
      }
      this.#basicHosts.add(host);
      return basic(this.#creds!);
    }
    throw new RegistryAuthError(`registry ${host} answered 401 without a Basic or Bearer challenge.`);
  }

  async #bearer(host: string, scope: string, challenge: AuthChallenge, send: TokenSender): Promise<string> {
    const { realm, service } = challenge.params;
    let url: URL;
    try {
      url = new URL(realm ?? '');
    } catch {
      throw new RegistryProtocolError(`registry ${host} sent a Bearer challenge without a valid realm URL.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new RegistryProtocolError(`registry ${host} sent a token realm that is not http(s).`);
    }
    const hasCreds = this.#hasBasic() || this.#creds?.identityToken !== undefined;
    // Credentials must not cross the network in clear text unless the user opted into plain HTTP.
    if (url.protocol === 'http:' && hasCreds && !this.#allowHttpRealm) {
      throw new RegistryAuthError(
        `registry ${host} wants credentials sent to a plain-HTTP token service (${url.host}); refusing without insecure: true.`,
      );
    }
    const wanted = challenge.params.scope ?? scope;
    let res: http.IncomingMessage;
    if (this.#creds?.identityToken) {
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: this.#creds.identityToken,
        client_id: 'mooring',
        scope: wanted,
      });
      if (service !== undefined) form.set('service', service);
      res = await send({
        method: 'POST',
        url,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(form.toString()),
      });
    } else {
      if (service !== undefined) url.searchParams.set('service', service);
      if (wanted) url.searchParams.set('scope', wanted);
      const headers: Record<string, string> = {};
      if (this.#hasBasic()) headers.Authorization = basic(this.#creds!);
      res = await send({ method: 'GET', url, headers });
    }
    const status = res.statusCode ?? 0;
    if (status === 401 || status === 403) {
      await readErrorBody(res);
      throw new RegistryAuthError(
        hasCreds
          ? `the token service of registry ${host} rejected the credentials.`
          : `registry ${host} requires authentication and no credentials were given.`,
      );
    }
    if (status !== 200) {
      await readErrorBody(res);
      const message = `the token service of registry ${host} answered HTTP ${status}.`;
      throw status >= 500 ? new RegistryUnavailableError(message) : new RegistryProtocolError(message);
    }
    const body = await readBody(res, MAX_TOKEN_RESPONSE, `the token response of registry ${host}`);
    let doc: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      doc = JSON.parse(body.toString('utf8')) as typeof doc;
    } catch {
      throw new RegistryProtocolError(`the token service of registry ${host} answered with invalid JSON.`);
    }
    const token = typeof doc?.token === 'string' && doc.token ? doc.token : doc?.access_token;
    if (typeof token !== 'string' || token.length === 0) {
      throw new RegistryProtocolError(`the token service of registry ${host} answered without a token.`);
    }
    const expiresIn =
      typeof doc.expires_in === 'number' && doc.expires_in > 0 ? doc.expires_in : DEFAULT_EXPIRES_IN;
    // Renew a little early so a token does not expire between the check and the request.
    const entry = { header: `Bearer ${token}`, expiresAt: Date.now() + expiresIn * 900 };
    this.#tokens.set(`${host} ${scope}`, entry);
    if (wanted !== scope) this.#tokens.set(`${host} ${wanted}`, entry);
    return entry.header;
  }
}
