import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, realpath } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** One served request, for access logs. */
export interface ArtifactServerLogLine {
  method: string;
  path: string;
  status: number;
  bytes: number;
  durationMs: number;
}

/** Options for {@link startArtifactServer}. */
export interface ArtifactServerOptions {
  /** The storage root to serve, read-only (created when missing). */
  root: string;
  /** Interface to listen on, e.g. `0.0.0.0` in a pod, `127.0.0.1` in tests. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Called once per request after the response is sent. */
  log?: (line: ArtifactServerLogLine) => void;
}

/** A running artifact server. */
export interface ArtifactServer {
  /** `http://<host>:<port>` */
  url: string;
  port: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const DIGEST_NAMED = /^([0-9a-f]{64})\.tar\.gz$/;

interface Reply {
  status: number;
  headers?: Record<string, string | number>;
  body?: string;
}

/**
 * Serves the artifact storage root read-only over HTTP: GET and HEAD of regular files strictly under the
 * root, no listings, no symlinks, no hidden files; strong sha256 ETags and `If-None-Match`.
 */
export async function startArtifactServer(options: ArtifactServerOptions): Promise<ArtifactServer> {
  // Compare against the root's real path so a symlinked mount point (e.g. /data -> /mnt/x) still works.
  // The source operator may start serving before it stored anything: an empty root is fine.
  await mkdir(options.root, { recursive: true });
  const root = await realpath(options.root);
  const server = createServer((req, res) => {
    const started = performance.now();
    let bytes = 0;
    res.on('finish', () => {
      options.log?.({
        method: req.method ?? '',
        path: (req.url ?? '').slice(0, 512),
        status: res.statusCode,
        bytes,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      });
    });
    handle(root, req, res, (n) => {
      bytes = n;
    }).catch(() => {
      if (!res.headersSent) send(res, req, { status: 500, body: 'internal error\n' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  countBytes: (n: number) => void,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, req, { status: 405, headers: { Allow: 'GET, HEAD' }, body: 'method not allowed\n' });
  }
  const segments = parsePath(req.url ?? '');
  if (!segments) return send(res, req, { status: 400, body: 'bad path\n' });
  const file = await openRegularFile(root, segments);
  if (!file) return send(res, req, { status: 404, body: 'not found\n' });
  try {
    const { fh, size } = file;
    const name = segments[segments.length - 1]!;
    // The file name is its digest when it has the content-address shape; anything else is hashed.
    const hex = DIGEST_NAMED.exec(name)?.[1] ?? (await hashHandle(fh));
    const etag = `"sha256:${hex}"`;
    const headers = {
      'Content-Type':
        name.endsWith('.gz') || name.endsWith('.tgz') ? 'application/gzip' : 'application/octet-stream',
      'Content-Length': size,
      ETag: etag,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    };
    if (etagMatches(req.headers['if-none-match'], etag)) {
      return send(res, req, { status: 304, headers: { ETag: etag, 'Cache-Control': 'no-cache' } });
    }
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    countBytes(size);
    // Exactly `size` bytes: Content-Length was promised from fstat, so a file that grows is not overrun.
    const stream = fh.createReadStream({ start: 0, end: size - 1, autoClose: false });
    if (size === 0) res.end();
    else await pipeline(stream, res);
  } finally {
    await file.fh.close();
  }
}

/**
 * Splits and decodes the request path; null when it is malformed or hostile: `..` or `.` segments (also
 * percent-encoded), empty segments, hidden names, NUL, backslashes or encoded slashes.
 */
function parsePath(rawUrl: string): string[] | null {
  const q = rawUrl.search(/[?#]/);
  const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
  if (!rawPath.startsWith('/') || rawPath.includes('\\')) return null;
  const segments: string[] = [];
  for (const raw of rawPath.slice(1).split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (seg === '' || seg.startsWith('.') || /[/\\\0]/.test(seg)) return null;
    segments.push(seg);
  }
  return segments.length > 0 ? segments : null;
}

/** Opens a regular file under root without following a symlink anywhere on the way; null if none. */
async function openRegularFile(
  root: string,
  segments: string[],
): Promise<{ fh: FileHandle; size: number } | null> {
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    current = join(current, segments[i]!);
    if (!current.startsWith(root + sep)) return null;
    const st = await lstat(current).catch(() => undefined);
    const last = i === segments.length - 1;
    if (!st || st.isSymbolicLink()) return null;
    if (last ? !st.isFile() : !st.isDirectory()) return null;
  }
  // A component swapped for a symlink after the lstat walk shows up here as a different real path.
  if ((await realpath(current).catch(() => '')) !== current) return null;
  const fh = await open(current, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!fh) return null;
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    return null;
  }
  return { fh, size: st.size };
}

async function hashHandle(fh: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fh.createReadStream({ start: 0, autoClose: false })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** RFC 9110 If-None-Match: weak comparison over a list of tags, or `*`. */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function send(res: ServerResponse, req: IncomingMessage, reply: Reply): void {
  const body = reply.status === 304 || req.method === 'HEAD' ? '' : (reply.body ?? '');
  res.writeHead(reply.status, {
    ...reply.headers,
    ...(reply.status === 304
      ? {}
      : {
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(reply.body ?? ''),
        }),
  });
  res.end(body);
}
