import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GitServer, type TestRepo } from '@mooring/test/harness';
import * as openpgp from 'openpgp';
import { type CheckoutResult, createGitClient } from '../src/index.ts';
import { signPayload } from '../src/signed-object.ts';
import { verifyCheckout, verifySignature } from '../src/verify-signature.ts';

interface Key {
  privateKey: string;
  publicKey: string;
  fingerprint: string;
}

async function newKey(name: string, passphrase?: string): Promise<Key> {
  const { privateKey, publicKey } = await openpgp.generateKey({
    userIDs: [{ name, email: `${name.toLowerCase()}@mooring.invalid` }],
    format: 'armored',
    ...(passphrase ? { passphrase } : {}),
  });
  const fingerprint = (await openpgp.readKey({ armoredKey: publicKey })).getFingerprint();
  return { privateKey, publicKey, fingerprint };
}

/** Runs git in the bare repository with stdin, for objects the harness has no helper for. */
function gitIn(cwd: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  const res = spawnSync('git', args, {
    cwd,
    input,
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', ...env },
  });
  if (res.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${res.stderr.toString()}`);
  return res.stdout.toString().trim();
}

describe('commit and tag signatures', () => {
  let server: GitServer;
  let repo: TestRepo;
  let trusted: Key;
  let untrusted: Key;
  let unsignedCommit: string;
  let signedCommit: string;
  let isoSignedCommit: string;
  const home = mkdtempSync(join(tmpdir(), 'mooring-git-sig-'));
  const opts = { timeoutMs: 20_000 };
  const bot = { name: 'Bot', email: 'bot@mooring.invalid' };

  before(async () => {
    [trusted, untrusted] = await Promise.all([newKey('Trusted'), newKey('Untrusted', 'open sesame')]);
    server = await GitServer.start();
    repo = await server.createRepo('signed');
    unsignedCommit = await repo.commit({ 'a.txt': 'a\n' }, 'unsigned');
    await repo.tag('v0.1.0');
    // A commit signed by the CLI backend (openpgp in-process, no gpg) ...
    const cli = createGitClient('cli');
    const dir = join(home, 'cli-write');
    await cli.cloneForWrite(repo.url, 'main', dir, opts);
    writeFileSync(join(dir, 'b.txt'), 'b\n');
    signedCommit = (await cli.commit(dir, 'signed by cli', bot, { signingKey: trusted.privateKey }))!;
    await cli.push(dir, repo.url, 'HEAD:refs/heads/main', opts);
    // ... a signed annotated tag on it, built as `git tag -s` lays it out ...
    const tagPayload = `object ${signedCommit}\ntype commit\ntag v1.0.0\ntagger Bot <bot@mooring.invalid> 1700000000 +0000\n\nrelease 1.0.0\n`;
    const tagOid = gitIn(
      repo.bareDir,
      ['hash-object', '-t', 'tag', '-w', '--stdin'],
      tagPayload + (await signPayload(tagPayload, trusted.privateKey)),
    );
    gitIn(repo.bareDir, ['update-ref', 'refs/tags/v1.0.0', tagOid]);
    // ... and one signed by the isomorphic backend with a passphrase-protected key, on another branch.
    const iso = createGitClient('isomorphic');
    const isoDir = join(home, 'iso-write');
    await iso.cloneForWrite(repo.url, 'main', isoDir, opts);
    writeFileSync(join(isoDir, 'c.txt'), 'c\n');
    isoSignedCommit = (await iso.commit(isoDir, 'signed by isomorphic', bot, {
      signingKey: untrusted.privateKey,
      passphrase: 'open sesame',
    }))!;
    await iso.push(isoDir, repo.url, 'HEAD:refs/heads/iso', opts);
  });

  after(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  async function checkoutBoth(ref: {
    tag?: string;
    branch?: string;
    commit?: string;
  }): Promise<CheckoutResult[]> {
    const out: CheckoutResult[] = [];
    for (const backend of ['cli', 'isomorphic'] as const) {
      const dir = mkdtempSync(join(home, `${backend}-`));
      out.push(
        await createGitClient(backend).checkout(repo.url, ref, dir, { ...opts, withSignatures: true }),
      );
    }
    return out;
  }

  test('both backends extract the same signed payloads from a signed commit and tag', async () => {
    const [cli, iso] = await checkoutBoth({ tag: 'v1.0.0' });
    assert.ok(cli?.commitSignature && cli.tagSignature);
    assert.deepEqual(iso?.commitSignature, cli.commitSignature);
    assert.deepEqual(iso?.tagSignature, cli.tagSignature);
    assert.equal(cli.commit, signedCommit);
    assert.doesNotMatch(cli.commitSignature.payload, /gpgsig/);
    assert.match(cli.commitSignature.payload, /\n\nsigned by cli\n$/);
    assert.match(cli.tagSignature.payload, /^object [0-9a-f]{40}\ntype commit\ntag v1\.0\.0\n/);
  });

  test('HEAD and TagAndHEAD verify with the trusted key, on both backends', async () => {
    for (const result of await checkoutBoth({ tag: 'v1.0.0' })) {
      const head = await verifyCheckout(result, 'HEAD', [trusted.publicKey]);
      assert.ok(head.verified, JSON.stringify(head));
      assert.equal(head.signatures[0]?.fingerprint, trusted.fingerprint);
      const both = await verifyCheckout(result, 'TagAndHEAD', [untrusted.publicKey, trusted.publicKey]);
      assert.ok(both.verified, JSON.stringify(both));
      assert.deepEqual(
        both.signatures.map((s) => s.object),
        ['tag', 'commit'],
      );
    }
  });

  test('a signature by a key that is not trusted does not verify', async () => {
    const [result] = await checkoutBoth({ branch: 'main' });
    const outcome = await verifyCheckout(result!, 'HEAD', [untrusted.publicKey]);
    assert.equal(outcome.verified, false);
    assert.match(!outcome.verified ? outcome.reason : '', /not among the trusted keys/);
  });

  test('an unsigned commit and an unsigned tag are reported as unsigned', async () => {
    const [result] = await checkoutBoth({ tag: 'v0.1.0' });
    const head = await verifyCheckout(result!, 'HEAD', [trusted.publicKey]);
    assert.deepEqual(head, { verified: false, reason: `commit ${unsignedCommit} is not signed` });
    const tag = await verifyCheckout(result!, 'Tag', [trusted.publicKey]);
    assert.deepEqual(tag, { verified: false, reason: "tag 'v0.1.0' is not signed" });
  });

  test('Tag mode on a branch is refused', async () => {
    const [result] = await checkoutBoth({ branch: 'main' });
    const outcome = await verifyCheckout(result!, 'Tag', [trusted.publicKey]);
    assert.equal(outcome.verified, false);
    assert.match(!outcome.verified ? outcome.reason : '', /needs a tag reference.*main@sha1:/);
  });

  test('a tampered payload fails verification', async () => {
    const [result] = await checkoutBoth({ branch: 'main' });
    const sig = result!.commitSignature!;
    assert.equal((await verifySignature(sig, [trusted.publicKey])).verified, true);
    const tampered = await verifySignature(
      { ...sig, payload: sig.payload.replace('signed by cli', 'signed by eve') },
      [trusted.publicKey],
    );
    assert.equal(tampered.verified, false);
  });

  test('a commit signed by the isomorphic backend with a passphrase-protected key verifies', async () => {
    const [cli, iso] = await checkoutBoth({ branch: 'iso' });
    assert.equal(cli!.commit, isoSignedCommit);
    for (const result of [cli!, iso!]) {
      const outcome = await verifyCheckout(result, 'HEAD', [untrusted.publicKey]);
      assert.ok(outcome.verified, JSON.stringify(outcome));
    }
  });

  const hasGpg = spawnSync('gpg', ['--version']).status === 0;
  test('git and gpg accept the commits and tags Mooring signs', {
    skip: !hasGpg && 'gpg not installed',
  }, () => {
    const gnupg = mkdtempSync(join(tmpdir(), 'mooring-gnupg-'));
    try {
      const env = { GNUPGHOME: gnupg };
      execFileSync('gpg', ['--batch', '--quiet', '--import'], {
        input: trusted.publicKey,
        env: { ...process.env, ...env },
      });
      execFileSync('gpg', ['--batch', '--quiet', '--import'], {
        input: untrusted.publicKey,
        env: { ...process.env, ...env },
      });
      gitIn(repo.bareDir, ['verify-commit', signedCommit], undefined, env);
      gitIn(repo.bareDir, ['verify-tag', 'v1.0.0'], undefined, env);
      gitIn(repo.bareDir, ['verify-commit', isoSignedCommit], undefined, env);
      assert.throws(() => gitIn(repo.bareDir, ['verify-commit', unsignedCommit], undefined, env));
    } finally {
      spawnSync('gpgconf', ['--kill', 'all'], { env: { ...process.env, GNUPGHOME: gnupg } });
      rmSync(gnupg, { recursive: true, force: true });
    }
  });
});
