import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Impersonation, KubeClient } from '@mooring/runtime';

/**
 * How the in-cluster UI learns who is asking. `token`: the user pastes a Kubernetes bearer token
 * once (or sends `Authorization: Bearer`), the UI checks it with a TokenReview and keeps only the
 * identity. `proxy`: an authenticating proxy in front sends `X-Remote-User`/`X-Remote-Group`,
 * believed only on requests that also carry the proxy's shared secret.
 */
export type InClusterAuth = { mode: 'token' } | { mode: 'proxy'; proxySecret: string };

/** The user a request acts as; every action is impersonated as this user and these groups. */
export type UiIdentity = Impersonation & { groups: string[] };

/** The header the proxy proves itself with, and the identity headers it sets. */
export const PROXY_SECRET_HEADER = 'x-mooring-proxy-secret';
const SESSION_COOKIE = 'mooring_ui_session';
const SESSION_TTL_MS = 8 * 3600_000;
// A bearer token sent with every request is reviewed once a minute, not on every request.
const REVIEW_CACHE_MS = 60_000;

const sameSecret = (a: string, b: string) => {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
};
const headerValues = (v: string | string[] | undefined): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** Asks the API server who a bearer token belongs to; undefined when it is not valid. */
export async function reviewToken(client: KubeClient, token: string): Promise<UiIdentity | undefined> {
  const review = await client.request<{
    status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] } };
  }>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
  });
  const user = review.status?.user;
  if (!review.status?.authenticated || !user?.username) return undefined;
  return { user: user.username, groups: user.groups ?? [] };
}

/** Logged-in users by a random session id held in an HttpOnly cookie; nothing of the token is kept. */
export class UiSessions {
  readonly #sessions = new Map<string, { identity: UiIdentity; expires: number }>();
  readonly #reviews = new Map<string, { identity: UiIdentity | undefined; expires: number }>();
  readonly #client: KubeClient;
  readonly #auth: InClusterAuth;

  constructor(client: KubeClient, auth: InClusterAuth) {
    this.#client = client;
    this.#auth = auth;
  }

  get mode(): InClusterAuth['mode'] {
    return this.#auth.mode;
  }

  /** Reviews `token` and opens a session for its user: the Set-Cookie value, or undefined when refused. */
  async login(token: string): Promise<{ cookie: string; identity: UiIdentity } | undefined> {
    const identity = await reviewToken(this.#client, token);
    if (!identity) return undefined;
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { identity, expires: Date.now() + SESSION_TTL_MS });
    return {
      identity,
      cookie: `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}`,
    };
  }

  /** Ends the request's session, if it has one. */
  logout(req: IncomingMessage): string {
    const id = sessionIdOf(req);
    if (id) this.#sessions.delete(id);
    return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** Who the request is from, or why it is refused. */
  async identify(req: IncomingMessage): Promise<{ identity: UiIdentity } | { refused: string }> {
    if (this.#auth.mode === 'proxy') {
      const given = req.headers[PROXY_SECRET_HEADER];
      const user = headerValues(req.headers['x-remote-user'])[0];
      if (typeof given !== 'string' || !sameSecret(given, this.#auth.proxySecret))
        return {
          refused: user
            ? 'X-Remote-User is believed only from the authenticating proxy, and this request did not carry its secret'
            : 'no identity: sign in through the authenticating proxy',
        };
      if (!user) return { refused: 'the proxy sent no X-Remote-User' };
      return { identity: { user, groups: headerValues(req.headers['x-remote-group']) } };
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) {
      const identity = await this.#reviewCached(bearer);
      return identity ? { identity } : { refused: 'the bearer token is not valid (TokenReview refused it)' };
    }
    const id = sessionIdOf(req);
    const session = id ? this.#sessions.get(id) : undefined;
    if (!session || session.expires < Date.now()) {
      if (id) this.#sessions.delete(id);
      return { refused: 'not signed in: paste a Kubernetes token on the sign-in page' };
    }
    return { identity: session.identity };
  }

  async #reviewCached(token: string): Promise<UiIdentity | undefined> {
    // Keyed by a digest: the token itself is never kept.
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = this.#reviews.get(key);
    if (hit && hit.expires > Date.now()) return hit.identity;
    const identity = await reviewToken(this.#client, token);
    this.#reviews.set(key, { identity, expires: Date.now() + REVIEW_CACHE_MS });
    return identity;
  }
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  return new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([A-Za-z0-9_-]+)`).exec(req.headers.cookie ?? '')?.[1];
}

/**
 * The in-cluster server's CSRF rule: a write comes from the page itself, so its Origin (or
 * Sec-Fetch-Site) says same-origin — `allowedOrigin` when set (the proxy may rewrite Host),
 * else the Host the request names. Returns the reason it is refused, or undefined.
 */
export function crossSiteRefusal(req: IncomingMessage, allowedOrigin?: string): string | undefined {
  if (req.method === 'GET' || req.method === 'HEAD') return undefined;
  const origin = req.headers.origin;
  if (origin === undefined)
    return req.headers['sec-fetch-site'] === 'same-origin'
      ? undefined
      : 'a write must come from the page (no Origin header)';
  if (allowedOrigin) return origin === allowedOrigin ? undefined : `Origin ${origin} is not this UI`;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return `Origin ${origin} is not a URL`;
  }
  return host === req.headers.host ? undefined : `Origin ${origin} is not this UI`;
}
