// ImageUpdateAutomation end to end: images pushed to a real docker-registry are scanned, chosen by
// ImagePolicies and committed to a repository served by `git http-backend`, all on loopback, with
// the operator in this process against the real API server.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createGitClient, type GitClient, verifyCheckout } from '@mooring/git';
import { GitServer, git, TestRegistry, type TestRepo, testCluster, uniqueName } from '@mooring/test/harness';
import * as openpgp from 'openpgp';
import { imageAutomationOperator } from '../src/image-automation-operator.ts';
import {
  conditionOf,
  createGitRepository,
  createImageObject,
  createSecret,
  eventsOf,
  pushTags,
  type RunningOperator,
  requestReconcile,
  startImageOperator,
  waitForReady,
} from './image-fixture.ts';

let namespace: string;
let operator: RunningOperator;
let registry: TestRegistry;
let server: GitServer;
let home: string;
/** Pushes that the racing Git client should precede with a commit of its own, by repository URL. */
const raceBefore = new Map<string, () => Promise<unknown>>();

// The real CLI client, except that a push to a repository registered in `raceBefore` is preceded
// (once) by someone else's commit to the same branch: the remote moves between clone and push.
const real = createGitClient('cli');
const racingGit: GitClient = {
  backend: real.backend,
  resolve: (...a) => real.resolve(...a),
  checkout: (...a) => real.checkout(...a),
  cloneForWrite: (...a) => real.cloneForWrite(...a),
  commit: (...a) => real.commit(...a),
  async push(dir, url, refspec, opts) {
    const race = raceBefore.get(url);
    raceBefore.delete(url);
    if (race) await race();
    return real.push(dir, url, refspec, opts);
  },
};

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('image-auto');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  home = await mkdtemp(join(tmpdir(), 'mooring-image-auto-home-'));
  [registry, server] = await Promise.all([TestRegistry.start(), GitServer.start()]);
  operator = await startImageOperator(namespace, {
    definitions: [imageAutomationOperator({ git: racingGit })],
  });
});

after(async () => {
  await operator?.cleanup();
  await Promise.all([registry?.close(), server?.close()]);
  await rm(home, { recursive: true, force: true });
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

/** An ImageRepository + ImagePolicy (semver `range`) over freshly pushed `tags`; resolves once the policy is Ready. */
async function policyOver(tags: string[], range = '*', labels?: Record<string, string>) {
  const name = uniqueName('img');
  const image = `${registry.host}/apps/${name}`;
  await pushTags(registry.host, `apps/${name}`, tags);
  await createImageObject('ImageRepository', namespace, name, { image, interval: '10m', insecure: true });
  await createImageObject(
    'ImagePolicy',
    namespace,
    name,
    {
      imageRepositoryRef: { name },
      policy: { semver: { range } },
    },
    labels,
  );
  await waitForReady('ImagePolicy', namespace, name);
  return { name, image, marker: (suffix = '') => `# {"$imagepolicy": "${namespace}:${name}${suffix}"}` };
}

const show = (repo: TestRepo, rev: string, path: string) =>
  git(['show', `${rev}:${path}`], { cwd: repo.bareDir, home });
const changedFiles = (repo: TestRepo, from: string, to: string) =>
  git(['diff', '--name-only', from, to], { cwd: repo.bareDir, home });

async function automation(
  repo: TestRepo,
  spec: Record<string, unknown> = {},
  git: Record<string, unknown> = {},
) {
  const name = uniqueName('auto');
  await createGitRepository(namespace, name, { url: repo.url, ref: { branch: 'main' } });
  await createImageObject('ImageUpdateAutomation', namespace, name, {
    sourceRef: { kind: 'GitRepository', name },
    interval: '10m',
    git: { commit: { author: { name: 'Image Bot', email: 'bot@mooring.invalid' } }, ...git },
    ...spec,
  });
  return name;
}

describe('ImageUpdateAutomation', { concurrency: 3 }, () => {
  test('commits the chosen images into the marked values only, then stays quiet until a new tag arrives', async () => {
    // The selector keeps the other tests' policies in this namespace out of this automation.
    const group = { 'test.mooring.dev/group': uniqueName('g') };
    const web = await policyOver(['1.0.0', '1.4.0', '2.0.0'], '^1', group);
    const api = await policyOver(['0.9.0'], '*', group);
    const repo = await server.createRepo(uniqueName('deploy'));
    const deployment = `# The web Deployment; keep this comment.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: "${web.image}:1.0.0"   ${web.marker()}
        - name: api
          image: ${api.image}:0.1.0 ${api.marker()}
---
# second document, untouched
kind: ConfigMap
metadata: {name: settings}
data:
  tag: '1.0.0' ${web.marker(':tag')}
  name: old/name ${web.marker(':name')}
  unrelated: "1.0.0"
`;
    const base = await repo.commit({
      'deploy/app.yaml': deployment,
      'other/notes.yaml': 'a: 1 # plain\n',
      'README.md': 'hi\n',
    });
    const name = await automation(
      repo,
      { update: { strategy: 'Setters', path: './deploy' }, policySelector: { matchLabels: group } },
      {
        commit: {
          author: { name: 'Image Bot', email: 'bot@mooring.invalid' },
          messageTemplate:
            'Automation {{AutomationObject.Name}}\n\n{{#Changed.Changes}}{{File}} {{Kind}}/{{Name}}: {{OldValue}} -> {{NewValue}}\n{{/Changed.Changes}}',
        },
      },
    );
    const ready = await waitForReady(
      'ImageUpdateAutomation',
      namespace,
      name,
      'True',
      (o) => !!o.status?.lastPushCommit,
    );
    const head = await repo.revParse('main');
    assert.equal(ready.status?.lastPushCommit, head);
    assert.equal(ready.status?.observedSourceRevision, `main@sha1:${head}`);
    assert.ok(ready.status?.lastPushTime && ready.status.lastAutomationRunTime);
    assert.deepEqual(ready.status?.observedPolicies, {
      [web.name]: { name: web.image, tag: '1.4.0' },
      [api.name]: { name: api.image, tag: '0.9.0' },
    });
    assert.equal(await changedFiles(repo, base, head), 'deploy/app.yaml');
    const expected = deployment
      .replace(`"${web.image}:1.0.0"`, `"${web.image}:1.4.0"`)
      .replace(`${api.image}:0.1.0`, `${api.image}:0.9.0`)
      .replace("tag: '1.0.0'", "tag: '1.4.0'")
      .replace('name: old/name', `name: ${web.image}`);
    assert.equal(`${await show(repo, head, 'deploy/app.yaml')}\n`, expected);
    const message = await git(['log', '-1', '--format=%an <%ae>%n%B', head], { cwd: repo.bareDir, home });
    assert.equal(
      message,
      [
        'Image Bot <bot@mooring.invalid>',
        `Automation ${name}`,
        '',
        `deploy/app.yaml Deployment/web: ${web.image}:1.0.0 -> ${web.image}:1.4.0`,
        `deploy/app.yaml Deployment/web: ${api.image}:0.1.0 -> ${api.image}:0.9.0`,
        `deploy/app.yaml ConfigMap/settings: 1.0.0 -> 1.4.0`,
        `deploy/app.yaml ConfigMap/settings: old/name -> ${web.image}`,
      ].join('\n'),
    );
    const events = await eventsOf(namespace, name);
    assert.ok(
      events.some((e) => e.includes(`pushed commit '${head.slice(0, 12)}' to branch 'main'`)),
      events.join('\n'),
    );

    // Nothing to change: the run reports the revision and makes no commit.
    const again = await requestReconcile('ImageUpdateAutomation', namespace, name);
    assert.equal(await repo.revParse('main'), head);
    assert.match(conditionOf(again, 'Ready')!.message, /up to date/);

    // A new tag in range: scan → policy → a second commit, with no nudge on the policy or automation.
    await pushTags(registry.host, web.image.slice(registry.host.length + 1), ['1.5.0']);
    await requestReconcile('ImageRepository', namespace, web.name);
    const moved = await waitForReady(
      'ImageUpdateAutomation',
      namespace,
      name,
      'True',
      // The second commit itself. A Ready status without lastPushCommit between the two pushes has
      // been seen once in CI (an open defect, probably a status written from a stale cached copy).
      (o) => typeof o.status?.lastPushCommit === 'string' && o.status.lastPushCommit !== head,
    );
    const next = moved.status!.lastPushCommit as string;
    assert.equal(await repo.revParse('main'), next);
    assert.match(await show(repo, next, 'deploy/app.yaml'), new RegExp(`"${web.image}:1\\.5\\.0"`));
  });

  test('pushes to a new branch created from the checkout branch, leaving that branch alone', async () => {
    const web = await policyOver(['3.1.0']);
    const repo = await server.createRepo(uniqueName('branch'));
    const base = await repo.commit({ 'app.yaml': `image: ${web.image}:3.0.0 ${web.marker()}\n` });
    const name = await automation(repo, {}, { push: { branch: 'image-updates' } });
    const ready = await waitForReady(
      'ImageUpdateAutomation',
      namespace,
      name,
      'True',
      (o) => !!o.status?.lastPushCommit,
    );
    assert.equal(await repo.revParse('main'), base);
    const pushed = await repo.revParse('image-updates');
    assert.equal(ready.status?.lastPushCommit, pushed);
    assert.equal(await git(['rev-parse', `${pushed}^`], { cwd: repo.bareDir, home }), base);
    assert.equal(await show(repo, pushed, 'app.yaml'), `image: ${web.image}:3.1.0 ${web.marker()}`);
  });

  test('signs the commit with the OpenPGP key from the Secret; the public key verifies it', async () => {
    const web = await policyOver(['1.1.0']);
    const repo = await server.createRepo(uniqueName('signed'));
    await repo.commit({ 'app.yaml': `image: ${web.image}:1.0.0 ${web.marker()}\n` });
    const { privateKey, publicKey } = await openpgp.generateKey({
      userIDs: [{ name: 'Image Bot', email: 'bot@mooring.invalid' }],
      passphrase: 'key-pass-phrase',
      format: 'armored',
    });
    const keySecret = uniqueName('gpg');
    await createSecret(namespace, keySecret, { 'git.asc': privateKey, passphrase: 'key-pass-phrase' });
    const name = await automation(
      repo,
      {},
      {
        commit: { author: { email: 'bot@mooring.invalid' }, signingKey: { secretRef: { name: keySecret } } },
      },
    );
    await waitForReady('ImageUpdateAutomation', namespace, name, 'True', (o) => !!o.status?.lastPushCommit);
    const dir = await mkdtemp(join(tmpdir(), 'mooring-verify-'));
    try {
      const checkout = await real.checkout(repo.url, { branch: 'main' }, dir, {
        timeoutMs: 10_000,
        withSignatures: true,
      });
      const verified = await verifyCheckout(checkout, 'HEAD', [publicKey]);
      assert.equal(verified.verified, true, JSON.stringify(verified));
      const other = await openpgp.generateKey({ userIDs: [{ name: 'Other' }], format: 'armored' });
      assert.equal((await verifyCheckout(checkout, 'HEAD', [other.publicKey])).verified, false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a push rejected because the branch moved is retried on a fresh clone, keeping the other commit', async () => {
    const web = await policyOver(['5.0.0']);
    const repo = await server.createRepo(uniqueName('race'));
    await repo.commit({ 'app.yaml': `image: ${web.image}:4.0.0 ${web.marker()}\n` });
    let racing = '';
    raceBefore.set(repo.url, async () => {
      racing = await repo.commit({ 'CHANGELOG.md': 'someone else was faster\n' }, 'concurrent commit');
    });
    const name = await automation(repo);
    const ready = await waitForReady(
      'ImageUpdateAutomation',
      namespace,
      name,
      'True',
      (o) => !!o.status?.lastPushCommit,
    );
    const head = await repo.revParse('main');
    assert.equal(ready.status?.lastPushCommit, head);
    assert.ok(racing, 'the race ran');
    assert.equal(await git(['rev-parse', `${head}^`], { cwd: repo.bareDir, home }), racing);
    assert.equal(await show(repo, head, 'CHANGELOG.md'), 'someone else was faster');
    assert.equal(await show(repo, head, 'app.yaml'), `image: ${web.image}:5.0.0 ${web.marker()}`);
  });

  test('a Go text/template message stalls with a clear condition and no commit', async () => {
    const repo = await server.createRepo(uniqueName('tmpl'));
    const base = await repo.commit({ 'a.yaml': 'a: 1\n' });
    const name = await automation(
      repo,
      {},
      {
        commit: {
          author: { email: 'bot@mooring.invalid' },
          messageTemplate: '{{range .Changed.Changes}}{{end}}',
        },
      },
    );
    const stalled = await waitForReady('ImageUpdateAutomation', namespace, name, 'False');
    assert.equal(conditionOf(stalled, 'Stalled')?.status, 'True');
    assert.match(
      conditionOf(stalled, 'Ready')!.message,
      /Go template syntax; Mooring templates are Mustache/,
    );
    assert.equal(await repo.revParse('main'), base);
  });
});

test('wrong Git credentials: Ready False AuthenticationFailed, and the password is in no status or event', async (t) => {
  const password = 'git-Pa55word-never-shown';
  const locked = await GitServer.start({ auth: { username: 'bot', password } });
  t.after(() => locked.close());
  const repo = await locked.createRepo('locked');
  await repo.commit({ 'a.yaml': 'a: 1\n' });
  const secret = uniqueName('git-auth');
  await createSecret(namespace, secret, { username: 'bot', password: `${password}-wrong` });
  const name = uniqueName('auto-auth');
  await createGitRepository(namespace, name, {
    url: repo.url,
    ref: { branch: 'main' },
    secretRef: { name: secret },
  });
  await createImageObject('ImageUpdateAutomation', namespace, name, {
    sourceRef: { kind: 'GitRepository', name },
    interval: '10m',
    git: { commit: { author: { email: 'bot@mooring.invalid' } } },
  });
  const failed = await waitForReady('ImageUpdateAutomation', namespace, name, 'False');
  assert.equal(conditionOf(failed, 'Ready')!.reason, 'AuthenticationFailed');
  const events = await eventsOf(namespace, name);
  const everything = JSON.stringify(failed) + events.join('\n');
  assert.ok(!everything.includes(password), 'the password leaked into status or events');
});
