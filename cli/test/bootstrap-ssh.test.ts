import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { KubeObject } from '@mooring/runtime';
import { GitServer, privateControlPlane, SshGitServer } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const run = promisify(execFile);

const show = async (bare: string, file: string): Promise<string> =>
  (await run('git', ['--git-dir', bare, 'show', `main:${file}`], { maxBuffer: 8 << 20 })).stdout;

const head = async (bare: string): Promise<string> =>
  (await run('git', ['--git-dir', bare, 'rev-parse', 'main'])).stdout.trim();

/** `SHA256:…` of a public key file, as ssh-keygen (not the CLI) computes it. */
const fingerprint = async (pubFile: string): Promise<string> =>
  (await run('ssh-keygen', ['-l', '-f', pubFile])).stdout.split(' ')[1]!;

/** The lines of a private key that carry key material: none may ever be printed. */
const keyLines = (pem: string): string[] =>
  pem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));

function assertNoKey(output: string, pem: string): void {
  assert.ok(!output.includes('PRIVATE KEY'), output);
  for (const line of keyLines(pem))
    assert.ok(!output.includes(line), 'a line of the private key was printed');
}

const re = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('bootstrap git over SSH (push only)', () => {
  let http: GitServer;
  let ssh: SshGitServer;
  let tmp: string;
  let keyFile: string;
  let knownHostsFile: string;

  before(async () => {
    http = await GitServer.start();
    ssh = await SshGitServer.start({ reposRoot: join(http.root, 'repos') });
    tmp = await mkdtemp(join(tmpdir(), 'mooring-bootstrap-ssh-'));
    keyFile = join(tmp, 'deploy-key');
    knownHostsFile = join(tmp, 'known_hosts');
    await writeFile(keyFile, ssh.clientKey, { mode: 0o600 });
    await writeFile(knownHostsFile, `${ssh.knownHosts}\n`);
  });
  after(async () => {
    await ssh?.close();
    await http?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const args = (url: string, ...more: string[]): string[] => [
    'bootstrap',
    'git',
    '--url',
    url,
    '--path',
    'clusters/dev',
    '--skip-install',
    ...more,
  ];

  test('--private-key-file and --known-hosts-file push the manifests with an ssh:// GitRepository; the key is never printed', async () => {
    const repo = await http.createRepo('fleet');
    await repo.commit({ 'README.md': 'fleet\n' });
    const url = ssh.url('fleet');
    const first = await mooring(
      args(url, '--private-key-file', keyFile, '--known-hosts-file', knownHostsFile),
    );
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^✔ pushed commit [0-9a-f]{40}\n$/);
    assert.equal((await head(repo.bareDir)).length, 40);
    assertNoKey(first.stdout + first.stderr, ssh.clientKey);

    const sync = parseAllDocuments(await show(repo.bareDir, 'clusters/dev/mooring-system/sync.yaml')).map(
      (d) => d.toJS() as KubeObject,
    );
    assert.equal(sync[0]!.kind, 'GitRepository');
    assert.equal((sync[0]!.spec as { url: string }).url, url);
    assert.deepEqual((sync[0]!.spec as { secretRef: unknown }).secretRef, { name: 'mooring-system' });
    assert.ok(
      (await show(repo.bareDir, 'clusters/dev/mooring-system/components.yaml')).includes(
        'kind: CustomResourceDefinition',
      ),
    );
    assert.equal(await show(repo.bareDir, 'README.md'), 'fleet\n');

    const again = await mooring(
      args(url, '--private-key-file', keyFile, '--known-hosts-file', knownHostsFile),
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '✔ the repository is up to date\n');
  });

  test('a passphrase-protected key is used with --password / $MOORING_GIT_PASSWORD, and refused without it', async () => {
    await http.createRepo('locked');
    const locked = join(tmp, 'locked-key');
    await writeFile(locked, ssh.clientKey, { mode: 0o600 });
    await run('ssh-keygen', ['-q', '-p', '-P', '', '-N', 'open-sesame-42', '-f', locked]);
    const lockedPem = await readFile(locked, 'utf8');
    const base = args(ssh.url('locked'), '--private-key-file', locked, '--known-hosts-file', knownHostsFile);

    const missing = await mooring(base, { env: { MOORING_GIT_PASSWORD: undefined } });
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr,
      `✗ the private key ${locked} is passphrase-protected: pass its passphrase with --password or $MOORING_GIT_PASSWORD.\n`,
    );

    const wrong = await mooring([...base, '--password', 'not-it-99']);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^✗ the passphrase does not decrypt the private key .*: check --password/);
    assert.ok(!wrong.stderr.includes('not-it-99'));

    const ok = await mooring(base, { env: { MOORING_GIT_PASSWORD: 'open-sesame-42' } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^✔ pushed commit [0-9a-f]{40}\n$/);
    assert.ok(!`${ok.stdout}${ok.stderr}`.includes('open-sesame-42'));
    assertNoKey(ok.stdout + ok.stderr, ssh.clientKey);
    assertNoKey(ok.stdout + ok.stderr, lockedPem);
  });

  test('a key the server does not authorise fails with the deploy-key sentence', async () => {
    const repo = await http.createRepo('refused');
    const before = await repo.commit({ 'README.md': 'refused\n' });
    const other = join(tmp, 'other-key');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'other', '-f', other]);
    const res = await mooring(
      args(ssh.url('refused'), '--private-key-file', other, '--known-hosts-file', knownHostsFile),
    );
    assert.equal(res.code, 1, res.stdout);
    assert.equal(
      res.stderr
        .split('\n')
        .filter((l) => l.startsWith('✗'))
        .join('\n'),
      `✗ the server refused the key: add ${await fingerprint(`${other}.pub`)} as a deploy key with write access, then run bootstrap again.`,
    );
    assertNoKey(res.stdout + res.stderr, await readFile(other, 'utf8'));
    assert.equal(await head(repo.bareDir), before);
  });

  test('a known_hosts that does not match the server fails naming the host, and nothing is pushed', async () => {
    const repo = await http.createRepo('spoofed');
    const before = await repo.commit({ 'README.md': 'spoofed\n' });
    const impostor = join(tmp, 'impostor');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', impostor]);
    const [type, key] = (await readFile(`${impostor}.pub`, 'utf8')).split(' ');
    const wrongHosts = join(tmp, 'wrong_known_hosts');
    await writeFile(wrongHosts, `[127.0.0.1]:${ssh.port} ${type} ${key}\n`);
    const res = await mooring(
      args(ssh.url('spoofed'), '--private-key-file', keyFile, '--known-hosts-file', wrongHosts),
    );
    assert.equal(res.code, 1, res.stdout);
    assert.match(
      res.stderr,
      new RegExp(
        `^✗ the host key of 127\\.0\\.0\\.1:${ssh.port} does not match ${re(wrongHosts)} \\(the server sent SHA256:\\S+\\): check --known-hosts-file`,
        'm',
      ),
    );
    assert.equal(await head(repo.bareDir), before);
    assert.equal(res.stdout, '');
  });

  test('without --private-key-file a new ed25519 key is printed for the deploy key; unauthorised, the push fails with the deploy-key sentence', async () => {
    const repo = await http.createRepo('fresh');
    const before = await repo.commit({ 'README.md': 'fresh\n' });
    const url = ssh.url('fresh');
    // No --known-hosts-file: the host key is scanned and its fingerprint shown for comparison.
    const res = await mooring(args(url, '--yes'));
    assert.equal(res.code, 1, res.stderr);
    const printed = /^(ssh-ed25519 AAAA\S+) mooring$/m.exec(res.stdout)?.[1];
    assert.ok(printed, res.stdout);
    assert.match(
      res.stdout,
      new RegExp(
        `^✔ generated an SSH key: add this public key to ${re(url)} as a deploy key with write access$`,
        'm',
      ),
    );
    const hostPub = join(tmp, 'host.pub');
    await writeFile(hostPub, `${ssh.knownHosts.split(' ').slice(1).join(' ')}\n`);
    assert.match(
      res.stderr,
      new RegExp(
        `^► 127\\.0\\.0\\.1:${ssh.port} presents ssh-ed25519 ${re(await fingerprint(hostPub))}: compare`,
        'm',
      ),
    );
    const newPub = join(tmp, 'generated.pub');
    await writeFile(newPub, `${printed}\n`);
    assert.match(
      res.stderr,
      new RegExp(
        `^✗ the server refused the key: add ${re(await fingerprint(newPub))} as a deploy key with write access`,
        'm',
      ),
    );
    assert.ok(!`${res.stdout}${res.stderr}`.includes('PRIVATE KEY'));
    assert.equal(await head(repo.bareDir), before);

    // Without a terminal and without --yes, it stops after printing the key instead of hanging.
    const unconfirmed = await mooring(args(url));
    assert.equal(unconfirmed.code, 1);
    assert.match(unconfirmed.stdout, /^ssh-ed25519 AAAA\S+ mooring$/m);
    assert.match(unconfirmed.stderr, /refusing without confirmation, pass --yes\.$/m);
  });

  test('an scp-style address is a usage error that shows the ssh:// form; SSH flags on HTTPS too', async () => {
    const scp = await mooring(args('git@example.com:org/fleet.git'));
    assert.equal(scp.code, 2);
    assert.equal(
      scp.stderr,
      '✗ git@example.com:org/fleet.git is an scp-style address, which bootstrap does not take: write it as ssh://git@example.com/org/fleet.git.\n',
    );
    const https = await mooring(args('https://example.com/org/fleet.git', '--private-key-file', keyFile));
    assert.equal(https.code, 2);
    assert.match(https.stderr, /^✗ --private-key-file and --known-hosts-file are for SSH/);
  });
});

// A plane of its own with workloads, as in bootstrap-cluster.test.ts: bootstrap installs Mooring and
// waits for its Deployments; the source and kustomize operators run here, watching mooring-system.
test('bootstrap git over SSH: Mooring manages itself through an ssh:// GitRepository whose Secret holds the key and known_hosts; a rerun reuses that key', async (t) => {
  const plane = await privateControlPlane(t, { workloads: true });
  const { client } = plane;
  const env = { KUBECONFIG: plane.kubeconfig };

  const http = await GitServer.start();
  t.after(() => http.close());
  const ssh = await SshGitServer.start({ reposRoot: join(http.root, 'repos') });
  t.after(() => ssh.close());
  const repo = await http.createRepo('fleet');
  await repo.commit({ 'README.md': 'fleet\n' });
  const url = ssh.url('fleet');
  const tmp = await mkdtemp(join(tmpdir(), 'mooring-bootstrap-ssh-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const keyFile = join(tmp, 'deploy-key');
  await writeFile(keyFile, ssh.clientKey, { mode: 0o600 });

  await startGitOpsOperators(t, 'mooring-system', { kubeconfig: plane.kubeconfig });

  const args = ['bootstrap', 'git', '--url', url, '--path', 'clusters/dev', '--timeout', '3m'];
  const first = await mooring([...args, '--private-key-file', keyFile], { env });
  assert.equal(first.code, 0, first.stderr);
  const pushed = /^✔ pushed commit ([0-9a-f]{40})$/m.exec(first.stdout)?.[1];
  assert.ok(pushed, first.stdout);
  assert.match(
    first.stdout,
    new RegExp(`^✔ Mooring manages itself from ${re(url)} at main@sha1:${pushed}$`, 'm'),
  );
  assertNoKey(first.stdout + first.stderr, ssh.clientKey);

  const secret = await client.get({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: 'mooring-system',
    name: 'mooring-system',
  });
  const data = Object.fromEntries(
    Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, 'base64').toString('utf8'),
    ]),
  );
  assert.deepEqual(Object.keys(data).sort(), ['identity', 'identity.pub', 'known_hosts']);
  assert.equal(data.identity!.trim(), ssh.clientKey.trim());
  assert.equal(data['identity.pub']!.trim(), (await run('ssh-keygen', ['-y', '-f', keyFile])).stdout.trim());
  // Scanned, since no --known-hosts-file was given: the server's own host key.
  assert.ok(data.known_hosts!.includes(ssh.knownHosts.split(' ').slice(1).join(' ')), data.known_hosts);

  const gitRepo = await client.get({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    namespace: 'mooring-system',
    name: 'mooring-system',
  });
  assert.equal((gitRepo.spec as { url: string }).url, url);
  assert.deepEqual((gitRepo.spec as { secretRef: unknown }).secretRef, { name: 'mooring-system' });

  // A rerun without --private-key-file takes the key from the Secret: no new deploy key to add.
  const again = await mooring(args, { env });
  assert.equal(again.code, 0, again.stderr);
  const keyFp = (await run('ssh-keygen', ['-l', '-f', keyFile])).stdout.split(' ')[1]!;
  assert.match(
    again.stderr,
    new RegExp(`^► using the SSH key ${re(keyFp)} from Secret mooring-system/mooring-system$`, 'm'),
  );
  assert.match(again.stdout, /^✔ the repository is up to date$/m);
  assert.match(
    again.stdout,
    new RegExp(`^✔ Mooring manages itself from ${re(url)} at main@sha1:${pushed}$`, 'm'),
  );
  assertNoKey(again.stdout + again.stderr, ssh.clientKey);
});
