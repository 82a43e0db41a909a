// GitRepository credentials and trust: basic, bearer and SSH key auth against real servers
// (git http-backend, sshd), OpenPGP signature verification, and the isomorphic-git backend.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConditionType } from '@mooring/api';
import { createGitClient } from '@mooring/git';
import { GitServer, SshGitServer, testCluster, uniqueName } from '@mooring/test/harness';
import * as openpgp from 'openpgp';
import {
  conditionOf,
  createSource,
  type RunningSource,
  startSourceOperator,
  waitForReady,
} from './source-fixture.ts';

const KIND = 'GitRepository';
const PASSWORD = 'pw-Canary-7f3e91';
const TOKEN = 'tok-Canary-2b8d44';
let namespace: string;
let operator: RunningSource;

async function secret(name: string, stringData: Record<string, string>): Promise<void> {
  const { client } = await testCluster();
  await client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData });
}

/** Everything the operator wrote about the object where a user (or attacker) could read it. */
async function visibleText(name: string): Promise<string> {
  const { client } = await testCluster();
  const obj = await client.get({ apiVersion: 'source.mooring.dev/v1', kind: KIND, namespace, name });
  const events = await client.list('v1', 'Event', { namespace });
  return JSON.stringify(obj) + JSON.stringify(events.items);
}

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('source-access');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  operator = await startSourceOperator(namespace);
});

after(async () => {
  await operator?.stop();
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

describe('GitRepository credentials', { concurrency: 3 }, () => {
  test('basic auth: the right password works, a wrong one fails without ever being shown', async () => {
    const server = await GitServer.start({ auth: { username: 'git', password: PASSWORD } });
    try {
      const repo = await server.createRepo('private');
      await repo.commit({ 'a.yaml': 'a' });
      await secret('basic-good', { username: 'git', password: PASSWORD });
      await secret('basic-bad', { username: 'git', password: `${PASSWORD}-wrong` });
      const good = uniqueName('basic-good');
      const bad = uniqueName('basic-bad');
      const none = uniqueName('basic-none');
      const spec = { url: repo.url, interval: '10m', ref: { branch: 'main' } };
      await createSource(KIND, namespace, good, { ...spec, secretRef: { name: 'basic-good' } });
      await createSource(KIND, namespace, bad, { ...spec, secretRef: { name: 'basic-bad' } });
      await createSource(KIND, namespace, none, spec);
      await waitForReady(KIND, namespace, good);
      for (const name of [bad, none]) {
        const failed = await waitForReady(KIND, namespace, name, 'False');
        assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'AuthenticationFailed', name);
      }
      assert.doesNotMatch(await visibleText(bad), new RegExp(PASSWORD));
    } finally {
      await server.close();
    }
  });

  test('a refused login names the Secret it tried, or says that no Secret is set', async () => {
    const server = await GitServer.start({ auth: { username: 'git', password: PASSWORD } });
    try {
      const repo = await server.createRepo('login');
      await repo.commit({ 'a.yaml': 'a' });
      await secret('login-bad', { username: 'git', password: `${PASSWORD}-wrong` });
      const bad = uniqueName('login-bad');
      const none = uniqueName('login-none');
      const spec = { url: repo.url, interval: '10m', ref: { branch: 'main' } };
      await createSource(KIND, namespace, bad, { ...spec, secretRef: { name: 'login-bad' } });
      await createSource(KIND, namespace, none, spec);
      const wrong = await waitForReady(KIND, namespace, bad, 'False');
      const missing = await waitForReady(KIND, namespace, none, 'False');
      for (const failed of [wrong, missing])
        assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'AuthenticationFailed');
      assert.match(
        conditionOf(wrong, 'Ready')!.message,
        new RegExp(`authentication failed with the credentials in Secret ${namespace}/login-bad\\b`),
      );
      assert.match(
        conditionOf(missing, 'Ready')!.message,
        /the server asks for credentials and spec\.secretRef is not set/,
      );
      assert.doesNotMatch(await visibleText(bad), new RegExp(PASSWORD));
    } finally {
      await server.close();
    }
  });

  test('a repository the server does not have is reported as not found, at its URL', async () => {
    const open = await GitServer.start();
    const guarded = await GitServer.start({ auth: { username: 'git', password: PASSWORD } });
    try {
      await secret('notfound-good', { username: 'git', password: PASSWORD });
      const plain = uniqueName('notfound');
      const withSecret = uniqueName('notfound-secret');
      const plainUrl = `${open.baseUrl}/no-such-repo.git`;
      const guardedUrl = `${guarded.baseUrl}/no-such-repo.git`;
      await createSource(KIND, namespace, plain, { url: plainUrl, interval: '10m' });
      await createSource(KIND, namespace, withSecret, {
        url: guardedUrl,
        interval: '10m',
        secretRef: { name: 'notfound-good' },
      });
      const failed = await waitForReady(KIND, namespace, plain, 'False');
      assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'GitOperationFailed');
      assert.equal(conditionOf(failed, 'Ready')!.message, `repository not found at ${plainUrl}`);
      // Hosts answer 404 for a private repository the credentials may not read: the Secret is named.
      const hidden = await waitForReady(KIND, namespace, withSecret, 'False');
      const message = conditionOf(hidden, 'Ready')!.message;
      assert.ok(message.startsWith(`repository not found at ${guardedUrl}`), message);
      assert.ok(message.includes(`Secret ${namespace}/notfound-good`), message);
    } finally {
      await guarded.close();
      await open.close();
    }
  });

  test('bearer token auth', async () => {
    const server = await GitServer.start({ auth: { bearerToken: TOKEN } });
    try {
      const repo = await server.createRepo('bearer');
      const commit = await repo.commit({ 'a.yaml': 'a' });
      await secret('bearer-good', { bearerToken: TOKEN });
      await secret('bearer-bad', { bearerToken: `${TOKEN}-wrong` });
      const good = uniqueName('bearer-good');
      const bad = uniqueName('bearer-bad');
      const spec = { url: repo.url, interval: '10m', ref: { branch: 'main' } };
      await createSource(KIND, namespace, good, { ...spec, secretRef: { name: 'bearer-good' } });
      await createSource(KIND, namespace, bad, { ...spec, secretRef: { name: 'bearer-bad' } });
      assert.equal(
        (await waitForReady(KIND, namespace, good)).status!.artifact!.revision,
        `main@sha1:${commit}`,
      );
      await waitForReady(KIND, namespace, bad, 'False');
      assert.doesNotMatch(await visibleText(bad), new RegExp(TOKEN));
    } finally {
      await server.close();
    }
  });

  test('SSH with a key and strict host-key checking; a wrong known_hosts is refused', async () => {
    const http = await GitServer.start();
    const ssh = await SshGitServer.start({ reposRoot: join(http.root, 'repos') });
    try {
      const repo = await http.createRepo('over-ssh');
      const commit = await repo.commit({ 'a.yaml': 'a' });
      await secret('ssh-good', { identity: ssh.clientKey, known_hosts: ssh.knownHosts });
      const otherHost = ssh.knownHosts.replace(
        / \S+$/,
        ' AAAAC3NzaC1lZDI1NTE5AAAAIEbKMHg3cK8k4b5Vb7Ue0iA3kzRkQ3w0m0m8u4sJm2zT',
      );
      await secret('ssh-bad-host', { identity: ssh.clientKey, known_hosts: otherHost });
      const good = uniqueName('ssh-good');
      const bad = uniqueName('ssh-bad-host');
      const spec = { url: ssh.url('over-ssh'), interval: '10m', ref: { branch: 'main' } };
      await createSource(KIND, namespace, good, { ...spec, secretRef: { name: 'ssh-good' } });
      await createSource(KIND, namespace, bad, { ...spec, secretRef: { name: 'ssh-bad-host' } });
      assert.equal(
        (await waitForReady(KIND, namespace, good)).status!.artifact!.revision,
        `main@sha1:${commit}`,
      );
      const failed = await waitForReady(KIND, namespace, bad, 'False');
      assert.match(conditionOf(failed, 'Ready')!.message, /host key/i);
      assert.doesNotMatch(await visibleText(bad), /PRIVATE KEY/);
    } finally {
      await ssh.close();
      await http.close();
    }
  });
});

describe('GitRepository signature verification', () => {
  test('a commit signed by a trusted key verifies; untrusted and unsigned ones do not', async () => {
    const server = await GitServer.start();
    const work = await mkdtemp(join(tmpdir(), 'mooring-sign-'));
    try {
      const [trusted, stranger] = await Promise.all(
        ['Trusted', 'Stranger'].map((name) =>
          openpgp.generateKey({ userIDs: [{ name, email: `${name}@mooring.invalid` }], format: 'armored' }),
        ),
      );
      const repo = await server.createRepo('signed');
      await repo.commit({ 'a.yaml': 'unsigned' }, 'unsigned', 'unsigned');
      await repo.commit({ 'a.yaml': 'base' }, 'base', 'main');
      const git = createGitClient('cli');
      const author = { name: 'Bot', email: 'bot@mooring.invalid' };
      for (const [branch, key] of [
        ['main', trusted!.privateKey],
        ['stranger', stranger!.privateKey],
      ] as const) {
        const dir = join(work, branch);
        await git.cloneForWrite(repo.url, 'main', dir, { timeoutMs: 20_000 });
        await writeFile(join(dir, 'a.yaml'), `signed on ${branch}`);
        await git.commit(dir, `signed on ${branch}`, author, { signingKey: key });
        await git.push(dir, repo.url, `HEAD:refs/heads/${branch}`, { timeoutMs: 20_000 });
      }
      await secret('trusted-keys', { 'trusted.asc': trusted!.publicKey });
      const verify = { mode: 'HEAD', secretRef: { name: 'trusted-keys' } };
      const names = {
        main: uniqueName('signed'),
        stranger: uniqueName('stranger'),
        unsigned: uniqueName('unsigned'),
      };
      for (const [branch, name] of Object.entries(names)) {
        await createSource(KIND, namespace, name, {
          url: repo.url,
          interval: '10m',
          ref: { branch },
          verify,
        });
      }
      const ok = await waitForReady(KIND, namespace, names.main);
      assert.equal(conditionOf(ok, ConditionType.SourceVerified)?.status, 'True');
      assert.equal(ok.status!.sourceVerificationMode, 'HEAD');
      for (const name of [names.stranger, names.unsigned]) {
        const failed = await waitForReady(KIND, namespace, name, 'False');
        assert.equal(conditionOf(failed, ConditionType.SourceVerified)?.status, 'False', name);
        assert.equal(failed.status?.artifact, undefined, 'nothing unverified is stored');
      }
    } finally {
      await rm(work, { recursive: true, force: true });
      await server.close();
    }
  });
});

describe('GitRepository on the isomorphic-git backend', () => {
  test('packs the same artifact, byte for byte, as the git command line', async (t) => {
    const { client } = await testCluster();
    const isoNamespace = uniqueName('source-iso');
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: isoNamespace } });
    const iso = await startSourceOperator(isoNamespace, ['--git-backend', 'isomorphic']);
    const server = await GitServer.start();
    t.after(async () => {
      await iso.stop();
      await server.close();
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: isoNamespace }).catch(() => {});
    });
    const repo = await server.createRepo('iso');
    await repo.commit({ 'deploy/a.yaml': 'a', 'deploy/b.yaml': 'b', '.github/x.yml': 'x' });
    const spec = { url: repo.url, interval: '10m', ref: { branch: 'main' } };
    await createSource(KIND, namespace, 'via-cli', spec);
    await createSource(KIND, isoNamespace, 'via-iso', spec);
    const viaCli = await waitForReady(KIND, namespace, 'via-cli');
    const viaIso = await waitForReady(KIND, isoNamespace, 'via-iso');
    assert.equal(viaIso.status!.artifact!.revision, viaCli.status!.artifact!.revision);
    assert.equal(viaIso.status!.artifact!.digest, viaCli.status!.artifact!.digest);
  });
});
