import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GitServer, git } from './git-server.ts';

describe('GitServer (git http-backend over HTTP)', () => {
  const home = mkdtempSync(join(tmpdir(), 'mooring-git-client-'));
  after(() => rmSync(home, { recursive: true, force: true }));

  test('serves a clone of what the test committed, tags included', async (t) => {
    const server = await GitServer.start();
    t.after(() => server.close());
    const repo = await server.createRepo('app');
    const first = await repo.commit({ 'deploy/app.yaml': 'kind: ConfigMap\n' }, 'first');
    await repo.tag('v1.0.0');
    const second = await repo.commit({ 'deploy/app.yaml': 'kind: Secret\n', 'README.md': 'hi\n' }, 'second');
    assert.notEqual(first, second);

    const dest = join(home, 'clone');
    await git(['clone', '-q', repo.url, dest], { home });
    assert.equal(readFileSync(join(dest, 'deploy/app.yaml'), 'utf8'), 'kind: Secret\n');
    assert.equal(await git(['rev-parse', 'HEAD'], { cwd: dest, home }), second);
    const tags = await git(['ls-remote', '--tags', repo.url], { home });
    assert.match(tags, new RegExp(`${first}\\s+refs/tags/v1\\.0\\.0\\^\\{\\}`));
    assert.ok(server.requests > 0);
  });

  test('accepts a push over HTTP that the bare repository then holds', async (t) => {
    const server = await GitServer.start();
    t.after(() => server.close());
    const repo = await server.createRepo('pushed');
    await repo.commit({ 'a.txt': 'a\n' });
    const dest = join(home, 'push-clone');
    await git(['clone', '-q', repo.url, dest], { home });
    writeFileSync(join(dest, 'b.txt'), 'b\n');
    await git(['add', 'b.txt'], { cwd: dest, home });
    await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'from client'], {
      cwd: dest,
      home,
    });
    await git(['push', '-q', 'origin', 'HEAD:main'], { cwd: dest, home });
    const pushed = await git(['rev-parse', 'HEAD'], { cwd: dest, home });
    assert.equal(await repo.revParse('main'), pushed);
  });

  describe('with basic auth', () => {
    let server: GitServer;
    before(async () => {
      server = await GitServer.start({ auth: { username: 'bot', password: 's3cret' } });
    });
    after(() => server.close());

    test('refuses a client without credentials and serves one with them', async () => {
      const repo = await server.createRepo('private');
      const sha = await repo.commit({ 'x.txt': 'x\n' });
      await assert.rejects(
        git(['ls-remote', repo.url], { home }),
        /401|Authentication failed|could not read Username/,
      );
      const withCreds = repo.url.replace('http://', 'http://bot:s3cret@');
      assert.match(await git(['ls-remote', withCreds, 'refs/heads/main'], { home }), new RegExp(sha));
    });
  });

  test('with a bearer token, only that token is let in', async (t) => {
    const server = await GitServer.start({ auth: { bearerToken: 'tok-123' } });
    t.after(() => server.close());
    const repo = await server.createRepo('bearer');
    await repo.commit({ 'x.txt': 'x\n' });
    const header = (v: string) => [
      '-c',
      `http.extraHeader=Authorization: Bearer ${v}`,
      'ls-remote',
      repo.url,
    ];
    await assert.rejects(git(header('wrong'), { home }));
    assert.match(await git(header('tok-123'), { home }), /refs\/heads\/main/);
  });
});
