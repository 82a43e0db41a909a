import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '@mooring/runtime';
import { describeError } from '../cli-error.ts';
import { ACTIONS, type Action, performAction } from './actions.ts';
import { streamChanges } from './change-stream.ts';
import { DIFF_KINDS, gitDiff, isDiffKind, refusalStatusOf } from './git-diff.ts';
import { crossSiteRefusal, type InClusterAuth, UiSessions } from './in-cluster-auth.ts';
import { loginPage } from './login-page.ts';
import { objectDetail } from './object-detail.ts';
import { objectGraph } from './object-graph.ts';
import { ObjectIndex } from './object-index.ts';
import { buildPage, type PageFiles } from './page-bundle.ts';
import { refusal } from './request-guard.ts';

export interface UiServerOptions {
  client: KubeClient;
  /** Only this namespace; every namespace the user may list when unset. */
  namespace?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The token; a random one when unset (tests pass none). */
  token?: string;
  /**
   * Served in the cluster for many users instead of on loopback for one: who asks is learnt from
   * `auth`, reads use `client` (a view-only ServiceAccount), and actions and diffs impersonate the user.
   */
  inCluster?: { auth: InClusterAuth; host: string; allowedOrigin?: string };
}

export interface UiServer {
  /** The URL to open, token included. */
  url: string;
  port: number;
  index: ObjectIndex;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024;
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  return JSON.parse((await readBody(req)) || '{}');
}

const intParam = (v: string | null): number | undefined => (v && /^\d+$/.test(v) ? Number(v) : undefined);

/**
 * `mooring ui`'s server: the page from memory and a JSON API over one watch per kind, every read
 * and action as the user's own credentials; loopback only, refusing requests without the token,
 * from another Host, or written from another Origin.
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { client } = options;
  const token = options.token ?? randomBytes(24).toString('base64url');
  const index = new ObjectIndex(client, options.namespace);
  const inCluster = options.inCluster;
  const sessions = inCluster ? new UiSessions(client, inCluster.auth) : undefined;
  const [page] = await Promise.all([buildPage(), index.start()]);
  let port = 0;

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const why = sessions ? crossSiteRefusal(req, inCluster?.allowedOrigin) : refusal(req, token, port);
    if (why) {
      res.writeHead(403, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      res.end(`mooring ui: refused: ${why}\n`);
      return;
    }
    let identity: { user: string; groups: string[] } | undefined;
    if (sessions) {
      if (path === '/login' && sessions.mode === 'token') return login(sessions, req, res);
      if (path === '/logout' && req.method === 'POST') {
        res.writeHead(303, { ...SECURITY_HEADERS, location: '/login', 'set-cookie': sessions.logout(req) });
        return void res.end();
      }
      const who = await sessions.identify(req);
      if ('refused' in who) {
        if (req.method === 'GET' && !path.startsWith('/api/') && sessions.mode === 'token') {
          res.writeHead(303, { ...SECURITY_HEADERS, location: '/login' });
          return void res.end();
        }
        return send(res, 401, { message: `mooring ui: refused: ${who.refused}` });
      }
      identity = who.identity;
    }
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (req.method === 'GET' && !path.startsWith('/api/'))
      return serveFile(page, path, sessions ? undefined : token, res);
    if (req.method === 'GET' && path === '/api/whoami')
      return send(res, 200, identity ?? { user: 'you (your kubeconfig)', groups: [] });
    if (req.method === 'GET' && path === '/api/objects') {
      const p = url.searchParams;
      return send(
        res,
        200,
        index.query({
          namespace: p.get('namespace') || undefined,
          kind: p.get('kind') || undefined,
          state: p.get('state') || undefined,
          label: p.get('label') || undefined,
          search: p.get('search') || undefined,
          offset: intParam(p.get('offset')),
          limit: intParam(p.get('limit')),
        }),
      );
    }
    if (req.method === 'GET' && path === '/api/changes') return streamChanges(index, req, res);
    if (req.method === 'GET' && path === '/api/graph')
      return send(
        res,
        200,
        objectGraph(index, {
          namespace: url.searchParams.get('namespace') || undefined,
          search: url.searchParams.get('search') || undefined,
        }),
      );
    if (req.method === 'GET' && parts[1] === 'object' && parts.length === 5) {
      const detail = await objectDetail(client, index, parts[2]!, parts[3]!, parts[4]!);
      return detail
        ? send(res, 200, detail)
        : send(res, 404, { message: `${parts[2]} ${parts[3]}/${parts[4]} not found` });
    }
    if (req.method === 'GET' && parts[1] === 'diff' && (parts.length === 4 || parts.length === 5)) {
      // /api/diff/<namespace>/<name> is a Kustomization's; /api/diff/<Kind>/<namespace>/<name> any kind's.
      const [kind, ns, name] = (
        parts.length === 4 ? ['Kustomization', ...parts.slice(2)] : parts.slice(2)
      ) as [string, string, string];
      if (!isDiffKind(kind))
        return send(res, 404, { message: `the diff is of ${DIFF_KINDS.join(' or ')} objects, not ${kind}` });
      // In the cluster as the signed-in user, not the view account: its dry runs are writes, and
      // what the user may read (a decryption Secret, the live objects) is for RBAC to decide.
      const asUser = identity ? client.impersonating(identity) : client;
      try {
        return send(res, 200, { diffs: await gitDiff(asUser, index, kind, ns, name) });
      } catch (err) {
        return send(res, refusalStatusOf(err) ?? 422, { message: describeError(err) });
      }
    }
    if (req.method === 'POST' && path === '/api/action') {
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? ''))
        return send(res, 415, { message: 'actions are JSON' });
      const body = (await readJson(req)) as {
        action?: string;
        kind?: string;
        namespace?: string;
        name?: string;
      };
      if (!ACTIONS.includes(body.action as Action) || !body.kind || !body.name)
        return send(res, 400, {
          message: `an action is one of ${ACTIONS.join(', ')} with kind, namespace and name`,
        });
      const result = await performAction(
        client,
        body.action as Action,
        body.kind,
        body.namespace ?? '',
        body.name,
        identity,
      );
      return send(res, result.ok ? 200 : (result.statusCode ?? 400), result);
    }
    send(res, 404, { message: `no such page: ${path}` });
  };

  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { message: describeError(err) });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, inCluster?.host ?? '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: inCluster ? `http://${inCluster.host}:${port}/` : `http://127.0.0.1:${port}/?token=${token}`,
    port,
    index,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await index.stop();
    },
  };
}

// The page itself: the token arrives in the URL once and becomes a same-site cookie, so the page's
// own requests carry it and links can be shared without it.
function serveFile(page: PageFiles, path: string, token: string | undefined, res: ServerResponse): void {
  const file = page.get(path) ?? page.get('/')!;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': file.type,
    ...(token ? { 'set-cookie': `mooring_ui_token=${token}; Path=/; HttpOnly; SameSite=Strict` } : {}),
  });
  res.end(file.body);
}

// The in-cluster sign-in: GET shows the form, POST reviews the pasted token and opens a session.
async function login(sessions: UiSessions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const page = (status: number, error?: string, cookie?: string) => {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      // The form posts to this same server, which the page-wide CSP forbids.
      'content-security-policy': SECURITY_HEADERS['content-security-policy'].replace(
        "form-action 'none'",
        "form-action 'self'",
      ),
      'content-type': 'text/html; charset=utf-8',
      ...(cookie ? { 'set-cookie': cookie } : {}),
    });
    res.end(loginPage(error));
  };
  if (req.method !== 'POST') return page(200);
  const raw = await readBody(req);
  const token = /^application\/json\b/.test(req.headers['content-type'] ?? '')
    ? (JSON.parse(raw || '{}') as { token?: string }).token
    : (new URLSearchParams(raw).get('token') ?? undefined);
  if (!token?.trim()) return page(400, 'Paste a token first.');
  const session = await sessions.login(token.trim());
  if (!session) return page(401, 'The API server did not accept that token.');
  res.writeHead(303, { ...SECURITY_HEADERS, location: '/', 'set-cookie': session.cookie });
  res.end();
}
