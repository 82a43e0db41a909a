import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GitServer, git, SshGitServer, type TestRepo } from '@mooring/test/harness';
import {
  createGitClient,
  type GitAuth,
  GitAuthError,
  type GitClient,
  GitError,
  GitRefNotFoundError,
  GitTimeoutError,
  PushRejectedError,
} from '../src/index.ts';

// Recognisable secrets: none of them may show up in any error a test sees.
const PASSWORD = 'pw-hunter2-Zq9XvB';
const WRONG_PASSWORD = 'wrong-pw-Kx7LmQ3-should-never-leak';
const TOKEN = 'tok-9f8e7d6c5b4a-bearer';

interface Transport {
  label: string;
  backend: 'cli' | 'isomorphic';
  ssh: boolean;
}

const transports: Transport[] = [
  { label: 'cli over http', backend: 'cli', ssh: false },
  { label: 'isomorphic over http', backend: 'isomorphic', ssh: false },
  { label: 'cli over ssh', backend: 'cli', ssh: true },
];

/** Everything a run needs: servers, a fixture repository and its commits. */
interface Fixture {
  http: GitServer;
  ssh: SshGitServer;
  home: string;
  repo: TestRepo;
  c1: string;
  c2: string;
  c3: string;
  master: string;
  pull: string;
  silentPort: number;
  closedPort: number;
  silent: net.Server;
}

const fx = {} as Fixture;
const sockets = new Set<net.Socket>();

before(async () => {
  fx.http = await GitServer.start({ auth: { username: 'mooring', password: PASSWORD } });
  fx.ssh = await SshGitServer.start({ reposRoot: join(fx.http.root, 'repos') });
  fx.home = mkdtempSync(join(tmpdir(), 'mooring-git-contract-'));
  const repo = await fx.http.createRepo('app');
  fx.repo = repo;
  fx.c1 = await repo.commit(
    { 'deploy/app.yaml': 'version: 1\n', 'other/x.yaml': 'x\n', 'README.md': 'hi\n' },
    'first commit',
  );
  await repo.tag('v1.0.0');
  await git(['update-ref', 'refs/tags/light', fx.c1], { cwd: repo.bareDir, home: fx.home });
  fx.c2 = await repo.commit({ 'deploy/app.yaml': 'version: 2\n' }, 'second commit');
  await repo.tag('v1.2.0');
  await repo.tag('not-semver');
  await repo.tag('v2.0.0-rc.1');
  fx.c3 = await repo.commit({ 'deploy/app.yaml': 'version: 3\n' }, 'third commit');
  fx.pull = await repo.commit({ 'deploy/app.yaml': 'version: pr\n' }, 'pull request', 'feature');
  await git(['update-ref', 'refs/pull/1/head', fx.pull], { cwd: repo.bareDir, home: fx.home });
  fx.master = await repo.commit({ 'deploy/app.yaml': 'version: master\n' }, 'on master', 'master');
  // A server that accepts connections and never answers, for timeouts.
  fx.silent = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => fx.silent.listen(0, '127.0.0.1', r));
  fx.silentPort = (fx.silent.address() as net.AddressInfo).port;
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  fx.closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});

after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => fx.silent?.close(() => r()));
  await fx.ssh?.close();
  await fx.http?.close();
  rmSync(fx.home, { recursive: true, force: true });
});

function urlOf(t: Transport, repoName: string): string {
  return t.ssh ? fx.ssh.url(repoName) : `${fx.http.baseUrl}/${repoName}.git`;
}

function authOf(t: Transport): GitAuth {
  return t.ssh
    ? { sshIdentity: fx.ssh.clientKey, sshKnownHosts: fx.ssh.knownHosts }
    : { username: 'mooring', password: PASSWORD };
}

function tmpDir(): string {
  return mkdtempSync(join(fx.home, 'co-'));
}

/** Files in a checkout, without git's own folder. */
function listing(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => p !== '.git' && !p.startsWith('.git/'))
    .sort();
}

function assertNoSecret(err: unknown): void {
  const e = err as Error;
  const everything = `${e.message}\n${e.stack}\n${JSON.stringify(e)}\n${String(e)}`;
  for (const secret of [
    PASSWORD,
    WRONG_PASSWORD,
    TOKEN,
    Buffer.from(`mooring:${WRONG_PASSWORD}`).toString('base64'),
  ])
    assert.ok(!everything.includes(secret), `error leaks a secret: ${e.message}`);
}

for (const t of transports) {
  describe(`GitClient contract: ${t.label}`, () => {
    let client: GitClient;
    before(() => {
      client = createGitClient(t.backend);
    });
    const opts = () => ({ auth: authOf(t), timeoutMs: 20_000 });

    test('resolves and checks out a branch', async () => {
      const url = urlOf(t, 'app');
      const resolved = await client.resolve(url, { branch: 'main' }, opts());
      assert.deepEqual(resolved, {
        commit: fx.c3,
        refName: 'refs/heads/main',
        revision: `main@sha1:${fx.c3}`,
      });
      const dir = tmpDir();
      const res = await client.checkout(url, { branch: 'main' }, dir, opts());
      assert.equal(res.commit, fx.c3);
      assert.equal(res.revision, `main@sha1:${fx.c3}`);
      assert.equal(res.head.subject, 'third commit');
      assert.equal(res.head.author.email, 'test@mooring.invalid');
      assert.equal(readFileSync(join(dir, 'deploy/app.yaml'), 'utf8'), 'version: 3\n');
    });

    test('an annotated tag resolves to the commit it points at', async () => {
      const url = urlOf(t, 'app');
      const resolved = await client.resolve(url, { tag: 'v1.0.0' }, opts());
      assert.equal(resolved.commit, fx.c1);
      assert.equal(resolved.revision, `v1.0.0@sha1:${fx.c1}`);
      const dir = tmpDir();
      const res = await client.checkout(url, { tag: 'v1.0.0' }, dir, opts());
      assert.equal(res.commit, fx.c1);
      assert.equal(res.refName, 'refs/tags/v1.0.0');
      assert.equal(readFileSync(join(dir, 'deploy/app.yaml'), 'utf8'), 'version: 1\n');
    });

    test('a lightweight tag resolves and checks out', async () => {
      const url = urlOf(t, 'app');
      assert.equal((await client.resolve(url, { tag: 'light' }, opts())).revision, `light@sha1:${fx.c1}`);
      const res = await client.checkout(url, { tag: 'light' }, tmpDir(), opts());
      assert.equal(res.commit, fx.c1);
    });

    test('semver picks the highest matching tag and ignores others', async () => {
      const url = urlOf(t, 'app');
      const resolved = await client.resolve(url, { semver: '>=1.0.0 <2.0.0', tag: 'v1.0.0' }, opts());
      assert.equal(resolved.revision, `v1.2.0@sha1:${fx.c2}`);
      const dir = tmpDir();
      const res = await client.checkout(url, { semver: '1.x' }, dir, opts());
      assert.equal(res.revision, `v1.2.0@sha1:${fx.c2}`);
      assert.equal(readFileSync(join(dir, 'deploy/app.yaml'), 'utf8'), 'version: 2\n');
    });

    test('a full ref name (refs/pull/1/head) wins over branch and tag', async () => {
      const url = urlOf(t, 'app');
      const ref = { name: 'refs/pull/1/head', branch: 'main', tag: 'v1.0.0' };
      assert.equal((await client.resolve(url, ref, opts())).revision, `refs/pull/1/head@sha1:${fx.pull}`);
      const dir = tmpDir();
      const res = await client.checkout(url, ref, dir, opts());
      assert.equal(res.revision, `refs/pull/1/head@sha1:${fx.pull}`);
      assert.equal(readFileSync(join(dir, 'deploy/app.yaml'), 'utf8'), 'version: pr\n');
    });

    test('a commit resolves without network and checks out', async () => {
      const url = urlOf(t, 'app');
      const before = fx.http.requests;
      const resolved = await client.resolve(url, { commit: fx.c2 }, opts());
      assert.deepEqual(resolved, { commit: fx.c2, revision: `sha1:${fx.c2}` });
      assert.equal(fx.http.requests, before);
      const dir = tmpDir();
      const res = await client.checkout(url, { commit: fx.c2 }, dir, opts());
      assert.equal(res.revision, `sha1:${fx.c2}`);
      assert.equal(readFileSync(join(dir, 'deploy/app.yaml'), 'utf8'), 'version: 2\n');
    });

    test('commit with branch checks the commit is on the branch', async () => {
      const url = urlOf(t, 'app');
      const res = await client.checkout(url, { commit: fx.c1, branch: 'main' }, tmpDir(), opts());
      assert.equal(res.revision, `main@sha1:${fx.c1}`);
      await assert.rejects(
        client.checkout(url, { commit: fx.pull, branch: 'main' }, tmpDir(), opts()),
        GitRefNotFoundError,
      );
    });

    test('no ref means branch master', async () => {
      const url = urlOf(t, 'app');
      const res = await client.checkout(url, {}, tmpDir(), opts());
      assert.equal(res.revision, `master@sha1:${fx.master}`);
    });

    test('sparse checkout leaves only the named directories', async () => {
      const dir = tmpDir();
      await client.checkout(urlOf(t, 'app'), { branch: 'main' }, dir, { ...opts(), sparse: ['deploy'] });
      assert.deepEqual(listing(dir), ['deploy', 'deploy/app.yaml']);
    });

    test('a missing ref fails with GitRefNotFoundError naming it', async () => {
      const url = urlOf(t, 'app');
      for (const call of [
        () => client.resolve(url, { branch: 'nope-branch' }, opts()),
        () => client.checkout(url, { branch: 'nope-branch' }, tmpDir(), opts()),
        () => client.resolve(url, { semver: '>=9.0.0' }, opts()),
      ]) {
        await assert.rejects(call(), (err: Error) => {
          assert.ok(err instanceof GitRefNotFoundError, err.message);
          assert.match(err.message, /nope-branch|9\.0\.0/);
          return true;
        });
      }
    });

    test('wrong credentials fail with GitAuthError and leak nothing', async (ctx) => {
      const url = urlOf(t, 'app');
      let auth: GitAuth = { username: 'mooring', password: WRONG_PASSWORD };
      if (t.ssh) {
        const other = await SshGitServer.start({ reposRoot: fx.home });
        auth = { sshIdentity: other.clientKey, sshKnownHosts: fx.ssh.knownHosts };
        await other.close();
      }
      // A private TMPDIR for this test, so other test processes' temp files cannot disturb the count.
      const privateTmp = mkdtempSync(join(fx.home, 'tmp-'));
      const savedTmp = process.env.TMPDIR;
      process.env.TMPDIR = privateTmp;
      ctx.after(() => {
        if (savedTmp === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = savedTmp;
      });
      // Anything the client (or the libraries under it) logs while failing must be clean too.
      const logged: string[] = [];
      const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
      const saved = methods.map((m) => console[m]);
      for (const m of methods) console[m] = (...args: unknown[]) => logged.push(args.map(String).join(' '));
      ctx.after(() => {
        for (const [i, m] of methods.entries()) console[m] = saved[i]!;
      });
      for (const call of [
        () => client.resolve(url, { branch: 'main' }, { auth, timeoutMs: 20_000 }),
        () => client.checkout(url, { branch: 'main' }, tmpDir(), { auth, timeoutMs: 20_000 }),
      ]) {
        await assert.rejects(call(), (err: Error) => {
          assert.ok(err instanceof GitAuthError, `${err.name}: ${err.message}`);
          assertNoSecret(err);
          return true;
        });
      }
      assert.deepEqual(readdirSync(privateTmp), [], 'temporary credential files were left behind');
      assertNoSecret(new Error(logged.join('\n')));
    });

    test('a closed port fails with a plain GitError that says the connection was refused', async () => {
      const url = t.ssh
        ? `ssh://root@127.0.0.1:${fx.closedPort}/x.git`
        : `http://mooring:${WRONG_PASSWORD}@127.0.0.1:${fx.closedPort}/x.git`;
      const calls: [string, () => Promise<unknown>, string][] = [
        ['resolve', () => client.resolve(url, { branch: 'main' }, opts()), 'connection refused'],
        // The CLI fetches http through curl, which reports a refused connection as "Couldn't connect to server".
        [
          'checkout',
          () => client.checkout(url, { branch: 'main' }, tmpDir(), opts()),
          t.backend === 'cli' && !t.ssh ? "couldn't connect to server" : 'connection refused',
        ],
      ];
      for (const [what, call, reason] of calls) {
        await assert.rejects(call(), (err: Error) => {
          assert.ok(err instanceof GitError, what);
          // Not a timeout: a refused connection fails at once instead of waiting out the 20 s budget.
          assert.ok(!(err instanceof GitAuthError) && !(err instanceof GitTimeoutError), err.message);
          assert.ok(
            err.message.includes(`cannot connect to 127.0.0.1 port ${fx.closedPort}: ${reason}`),
            `${what}: ${err.message}`,
          );
          assert.doesNotMatch(err.message, /Could not read from remote repository/);
          assertNoSecret(err);
          return true;
        });
      }
    });

    test('a server that never answers times out and can be aborted', async () => {
      const url = t.ssh
        ? `ssh://root@127.0.0.1:${fx.silentPort}/x.git`
        : `http://127.0.0.1:${fx.silentPort}/x.git`;
      // The message names what stopped the call, so no clock is needed to tell the two apart.
      await assert.rejects(
        client.checkout(url, { branch: 'main' }, tmpDir(), { auth: authOf(t), timeoutMs: 400 }),
        (err: Error) => {
          assert.ok(err instanceof GitTimeoutError, `${err.name}: ${err.message}`);
          assert.match(err.message, /timed out after 400 ms/);
          return true;
        },
      );
      // An abort long before the 20 s budget: "was aborted", never "timed out after 20000 ms".
      const abort = new AbortController();
      const call = client.resolve(
        url,
        { branch: 'main' },
        { auth: authOf(t), timeoutMs: 20_000, signal: abort.signal },
      );
      setTimeout(() => abort.abort(), 300);
      await assert.rejects(call, (err: Error) => {
        assert.ok(err instanceof GitTimeoutError, `${err.name}: ${err.message}`);
        assert.match(err.message, /was aborted/);
        return true;
      });
    });

    test('commits and pushes; nothing to commit gives undefined', async () => {
      const name = `push-ok-${t.backend}-${t.ssh ? 'ssh' : 'http'}`;
      const repo = await fx.http.createRepo(name);
      await repo.commit({ 'a.txt': 'a\n', 'gone.txt': 'bye\n' });
      const url = urlOf(t, name);
      const dir = tmpDir();
      const cloned = await client.cloneForWrite(url, 'main', dir, opts());
      assert.equal(cloned.revision, `main@sha1:${await repo.revParse('refs/heads/main')}`);
      assert.equal(
        await client.commit(dir, 'nothing', { name: 'Bot', email: 'bot@mooring.invalid' }),
        undefined,
      );
      writeFileSync(join(dir, 'b.txt'), 'b\n');
      rmSync(join(dir, 'gone.txt'));
      const sha = await client.commit(dir, 'add b', { name: 'Bot', email: 'bot@mooring.invalid' });
      assert.match(sha ?? '', /^[0-9a-f]{40}$/);
      await client.push(dir, url, 'HEAD:refs/heads/main', opts());
      assert.equal(await repo.revParse('refs/heads/main'), sha);
      const files = await git(['ls-tree', '--name-only', 'main'], { cwd: repo.bareDir, home: fx.home });
      assert.deepEqual(files.split('\n'), ['a.txt', 'b.txt']);
      const author = await git(['log', '-1', '--format=%an <%ae> %s', 'main'], {
        cwd: repo.bareDir,
        home: fx.home,
      });
      assert.equal(author, 'Bot <bot@mooring.invalid> add b');
    });

    test('a push after the remote moved is rejected', async () => {
      const name = `push-rej-${t.backend}-${t.ssh ? 'ssh' : 'http'}`;
      const repo = await fx.http.createRepo(name);
      await repo.commit({ 'a.txt': 'a\n' });
      const url = urlOf(t, name);
      const dir = tmpDir();
      await client.cloneForWrite(url, 'main', dir, opts());
      const moved = await repo.commit({ 'a.txt': 'moved\n' }, 'someone else');
      writeFileSync(join(dir, 'b.txt'), 'b\n');
      await client.commit(dir, 'mine', { name: 'Bot', email: 'bot@mooring.invalid' });
      await assert.rejects(client.push(dir, url, 'HEAD:refs/heads/main', opts()), PushRejectedError);
      assert.equal(await repo.revParse('refs/heads/main'), moved);
    });

    if (t.ssh) {
      test('a wrong known_hosts entry fails as an auth error about the host key', async () => {
        const other = await SshGitServer.start({ reposRoot: fx.home });
        const wrongHosts = other.knownHosts.replace(`:${other.port}]`, `:${fx.ssh.port}]`);
        await other.close();
        const auth = { sshIdentity: fx.ssh.clientKey, sshKnownHosts: wrongHosts };
        await assert.rejects(
          client.resolve(urlOf(t, 'app'), { branch: 'main' }, { auth, timeoutMs: 20_000 }),
          (err: Error) => {
            assert.ok(err instanceof GitAuthError, err.message);
            assert.match(err.message, /host key/i);
            return true;
          },
        );
      });
    }
  });
}

describe('GitClient contract: transport limits', () => {
  test('bearer tokens authenticate on both backends', async (t) => {
    const server = await GitServer.start({ auth: { bearerToken: TOKEN } });
    t.after(() => server.close());
    const repo = await server.createRepo('bearer');
    const sha = await repo.commit({ 'a.txt': 'a\n' });
    for (const backend of ['cli', 'isomorphic'] as const) {
      const client = createGitClient(backend);
      const res = await client.checkout(repo.url, { branch: 'main' }, tmpDir(), {
        auth: { bearerToken: TOKEN },
        timeoutMs: 20_000,
      });
      assert.equal(res.commit, sha, backend);
      await assert.rejects(
        client.resolve(
          repo.url,
          { branch: 'main' },
          { auth: { bearerToken: 'nope-token' }, timeoutMs: 20_000 },
        ),
        GitAuthError,
      );
    }
  });

  test('https with a private CA works when the CA is given and fails without it', async (t) => {
    const dir = tmpDir();
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    // TLS in front of the harness's HTTP server: the same repositories behind a private CA.
    const upstream = new URL(fx.http.baseUrl);
    const proxy = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      const out = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(out);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    t.after(() => {
      proxy.closeAllConnections();
      proxy.close();
    });
    const url = `https://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/app.git`;
    const auth = { username: 'mooring', password: PASSWORD };
    for (const backend of ['cli', 'isomorphic'] as const) {
      const client = createGitClient(backend);
      const res = await client.checkout(url, { branch: 'main' }, tmpDir(), {
        auth: { ...auth, caCert: cert },
        timeoutMs: 20_000,
      });
      assert.equal(res.commit, fx.c3, backend);
      await assert.rejects(
        client.resolve(url, { branch: 'main' }, { auth, timeoutMs: 20_000 }),
        (err: Error) => {
          assert.ok(err instanceof GitError && !(err instanceof GitAuthError), `${backend}: ${err.message}`);
          assert.match(err.message, /certificate|SSL|self.signed/i, backend);
          return true;
        },
      );
    }
  });

  test('isomorphic refuses ssh URLs with a clear error', async () => {
    await assert.rejects(
      createGitClient('isomorphic').resolve(fx.ssh.url('app'), { branch: 'main' }, { timeoutMs: 5000 }),
      (err: Error) => err instanceof GitError && /git CLI backend/.test(err.message),
    );
  });

  test('ref values that look like options are refused before git runs', async () => {
    for (const backend of ['cli', 'isomorphic'] as const) {
      await assert.rejects(
        createGitClient(backend).checkout(
          urlOf(transports[0]!, 'app'),
          { branch: '--upload-pack=touch /tmp/x' },
          tmpDir(),
          {
            timeoutMs: 5000,
          },
        ),
        (err: Error) => err instanceof GitError && /not a valid ref name/.test(err.message),
      );
    }
  });
});
