import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { GitServer } from './git-server.ts';
import { SshGitServer } from './ssh-git-server.ts';

const run = promisify(execFile);

describe('SshGitServer (sshd serving the GitServer repositories)', () => {
  let http: GitServer;
  let ssh: SshGitServer;
  const tmp = mkdtempSync(join(tmpdir(), 'mooring-ssh-test-'));

  before(async () => {
    http = await GitServer.start();
    ssh = await SshGitServer.start({ reposRoot: join(http.root, 'repos') });
  });
  after(async () => {
    await ssh?.close();
    await http?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  function sshEnv(knownHosts: string): NodeJS.ProcessEnv {
    writeFileSync(join(tmp, 'key'), ssh.clientKey, { mode: 0o600 });
    writeFileSync(join(tmp, 'known_hosts'), `${knownHosts}\n`);
    return {
      PATH: process.env.PATH,
      HOME: tmp,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_SSH_COMMAND: `ssh -F /dev/null -i ${join(tmp, 'key')} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(tmp, 'known_hosts')} -o StrictHostKeyChecking=yes -o BatchMode=yes`,
    };
  }

  test('clones over SSH what was committed through HTTP', async () => {
    const repo = await http.createRepo('both');
    const sha = await repo.commit({ 'app.yaml': 'kind: ConfigMap\n' });
    const dest = join(tmp, 'clone');
    await run('git', ['clone', '-q', ssh.url('both'), dest], { env: sshEnv(ssh.knownHosts) });
    assert.equal(readFileSync(join(dest, 'app.yaml'), 'utf8'), 'kind: ConfigMap\n');
    const { stdout } = await run('git', ['rev-parse', 'HEAD'], { cwd: dest, env: sshEnv(ssh.knownHosts) });
    assert.equal(stdout.trim(), sha);
  });

  test('a wrong known_hosts entry fails the host key check', async () => {
    await http.createRepo('hostkey');
    const other = mkdtempSync(join(tmpdir(), 'mooring-ssh-other-'));
    try {
      await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(other, 'k')]);
      const pub = readFileSync(join(other, 'k.pub'), 'utf8').trim().split(' ');
      const wrong = `[127.0.0.1]:${ssh.port} ${pub[0]} ${pub[1]}`;
      await assert.rejects(
        run('git', ['ls-remote', ssh.url('hostkey')], { env: sshEnv(wrong) }),
        (err: { stderr?: string }) => /host key/i.test(err.stderr ?? ''),
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
