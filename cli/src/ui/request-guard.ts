import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Whether a request may use the UI: it names this server by a loopback Host (so a DNS-rebinding
 * page cannot), carries the process's token (in the `token` query or cookie), and a write comes
 * from the page itself (same Origin). Returns the reason it is refused, or undefined.
 */
export function refusal(req: IncomingMessage, token: string, port: number): string | undefined {
  const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const host = req.headers.host ?? '';
  if (!allowedHosts.has(host)) return `Host ${JSON.stringify(host)} is not this server`;
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHosts.has(origin.replace(/^http:\/\//, '')))
    return `Origin ${origin} is not this server`;
  const isWrite = req.method !== 'GET' && req.method !== 'HEAD';
  if (isWrite && origin === undefined && req.headers['sec-fetch-site'] !== 'same-origin')
    return 'a write must come from the page (no Origin header)';
  const given = tokenOf(req);
  if (!given || !sameToken(given, token))
    return 'the token is missing or wrong: open the URL `mooring ui` printed';
  return undefined;
}

/** The token a request carries: the `token` query parameter, else the cookie the page was given. */
export function tokenOf(req: IncomingMessage): string | undefined {
  const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
  if (query) return query;
  const cookie = req.headers.cookie ?? '';
  return /(?:^|;\s*)mooring_ui_token=([A-Za-z0-9_-]+)/.exec(cookie)?.[1];
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
