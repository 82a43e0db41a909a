import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Who may use the server: nobody checked, HTTP basic credentials, or a bearer token. */
export type GitServerAuth = { username: string; password: string } | { bearerToken: string };

// git must never read the developer's own config or prompt; every repo here is ours.
function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Mooring Test',
    GIT_AUTHOR_EMAIL: 'test@mooring.invalid',
    GIT_COMMITTER_NAME: 'Mooring Test',
    GIT_COMMITTER_EMAIL: 'test@mooring.invalid',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: '*',
  };
}

/** Runs git with the harness's isolated environment; resolves to trimmed stdout. */
export async function git(args: string[], opts: { cwd?: string; home: string }): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd: opts.cwd, env: gitEnv(opts.home), maxBuffer: 64 << 20 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`git ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
  }
}

/** Files to write (string or Buffer) or delete (null), by repository-relative path. */
export type FileChanges = Record<string, string | Buffer | null>;

/** A bare repository served by the GitServer, with a work tree the test commits through. */
export class TestRepo {
  readonly name: string;
  readonly url: string;
  readonly bareDir: string;
  readonly #work: string;
  readonly #home: string;

  constructor(name: string, url: string, bareDir: string, work: string, home: string) {
    this.name = name;
    this.url = url;
    this.bareDir = bareDir;
    this.#work = work;
    this.#home = home;
  }

  #git(args: string[], cwd = this.#work): Promise<string> {
    return git(args, { cwd, home: this.#home });
  }

  /** Commits the changes on `branch` (created from the current commit when new), pushes, returns the SHA. */
  async commit(files: FileChanges, message = 'test commit', branch = 'main'): Promise<string> {
    const branches = await this.#git(['branch', '--list', branch]);
    const hasHead = await this.#git(['rev-parse', '--verify', '-q', 'HEAD']).catch(() => '');
    if (branches) await this.#git(['checkout', '-q', branch]);
    else await this.#git(hasHead ? ['checkout', '-q', '-b', branch] : ['checkout', '-q', '--orphan', branch]);
    for (const [path, content] of Object.entries(files)) {
      const abs = join(this.#work, path);
      if (content === null) rmSync(abs, { force: true });
      else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    await this.#git(['add', '-A']);
    await this.#git(['commit', '-q', '--allow-empty', '-m', message]);
    await this.#git(['push', '-q', this.bareDir, `HEAD:refs/heads/${branch}`]);
    return this.#git(['rev-parse', 'HEAD']);
  }

  /** Moves the work tree to the served `branch`, after something other than this repo pushed to it. */
  async pull(branch = 'main'): Promise<void> {
    await this.#git(['fetch', '-q', this.bareDir, `refs/heads/${branch}`]);
    await this.#git(['checkout', '-q', '-B', branch, 'FETCH_HEAD']);
  }

  /** Commits symbolic links (path → target, which may point anywhere) along with files on `branch`. */
  async commitSymlinks(
    links: Record<string, string>,
    files: FileChanges = {},
    branch = 'main',
  ): Promise<string> {
    for (const [path, target] of Object.entries(links)) {
      const abs = join(this.#work, path);
      mkdirSync(dirname(abs), { recursive: true });
      rmSync(abs, { force: true });
      symlinkSync(target, abs);
    }
    return this.commit(files, 'symlinks', branch);
  }

  /** Points an arbitrary ref (e.g. `refs/pull/7/head`) of the served repository at `commit`. */
  async pushRef(ref: string, commit: string): Promise<void> {
    await this.#git(['push', '-q', this.bareDir, `${commit}:${ref}`]);
  }

  /** Creates an annotated tag at `ref` and pushes it; returns the tagged commit. */
  async tag(name: string, ref = 'HEAD', message?: string): Promise<string> {
    await this.#git(['tag', '-a', name, '-m', message ?? name, ref]);
    await this.#git(['push', '-q', this.bareDir, `refs/tags/${name}`]);
    return this.#git(['rev-parse', `${name}^{commit}`]);
  }

  /** The commit a ref points at in the served (bare) repository. */
  revParse(ref: string): Promise<string> {
    return this.#git(['rev-parse', ref], this.bareDir);
  }
}

/**
 * A Git smart-HTTP server for tests: `git http-backend` (clone, fetch and push) behind a small
 * node:http wrapper that adds optional basic or bearer auth. Serves bare repositories that the
 * test creates; everything lives in a temporary folder removed on close.
 */
export class GitServer {
  readonly root: string;
  readonly baseUrl: string;
  /** Number of HTTP requests served, so tests can assert that a check stayed cheap. */
  requests = 0;
  readonly #server: http.Server;
  readonly #home: string;

  private constructor(root: string, server: http.Server) {
    this.root = root;
    this.#server = server;
    this.#home = join(root, 'home');
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
  }

  static async start(opts: { auth?: GitServerAuth } = {}): Promise<GitServer> {
    const root = mkdtempSync(join(tmpdir(), 'mooring-git-'));
    mkdirSync(join(root, 'repos'));
    mkdirSync(join(root, 'work'));
    mkdirSync(join(root, 'home'));
    let self: GitServer | undefined;
    const server = http.createServer((req, res) => {
      if (self) self.requests++;
      if (!authorized(req, opts.auth)) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="mooring-test"' }).end('unauthorized\n');
        return;
      }
      serveGit(join(root, 'repos'), join(root, 'home'), req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new GitServer(root, server);
    return self;
  }

  /** Creates an empty bare repository `<name>.git` that accepts pushes over HTTP. */
  async createRepo(name: string): Promise<TestRepo> {
    const bare = join(this.root, 'repos', `${name}.git`);
    const work = join(this.root, 'work', name);
    await git(['init', '-q', '--bare', '--initial-branch=main', bare], { home: this.#home });
    await git(['config', 'http.receivepack', 'true'], { cwd: bare, home: this.#home });
    await git(['init', '-q', '--initial-branch=main', work], { home: this.#home });
    return new TestRepo(name, `${this.baseUrl}/${name}.git`, bare, work, this.#home);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }
}

function authorized(req: http.IncomingMessage, auth: GitServerAuth | undefined): boolean {
  if (!auth) return true;
  const header = req.headers.authorization ?? '';
  if ('bearerToken' in auth) return header === `Bearer ${auth.bearerToken}`;
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return header === expected;
}

/** Runs one request through `git http-backend` as a CGI program. */
function serveGit(
  projectRoot: string,
  home: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: NodeJS.ProcessEnv = {
    ...gitEnv(home),
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REQUEST_METHOD: req.method ?? 'GET',
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_USER: 'test',
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
  };
  if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
  // The git client gzips large POST bodies; http-backend inflates them when told.
  if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol']) env.GIT_PROTOCOL = String(req.headers['git-protocol']);

  const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => {});
  let stderr = '';
  cgi.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });

  let head = Buffer.alloc(0);
  let headersSent = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const sep = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
    if (sep < 0) return;
    const sepLen = head[sep] === 13 ? 4 : 2;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, sep).toString().split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const key = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else headers[key] = value;
    }
    res.writeHead(status, headers);
    headersSent = true;
    res.write(head.subarray(sep + sepLen));
  });
  cgi.on('close', (code) => {
    if (!headersSent) res.writeHead(500).end(`git http-backend failed (${code}): ${stderr}`);
    else res.end();
  });
}
