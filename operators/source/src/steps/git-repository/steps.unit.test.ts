// Each step of a GitRepository's reconcile (./index.ts) on its own, through its real signature.
// The API server is the in-memory fake of test/simulation/fake-api-server.ts (Secrets, included
// GitRepositories), storage is operators/source/test/fake-artifact-storage.ts and Git a scripted
// GitClient: all fakes, for unit tests; the integration tests in operators/source/test keep the
// real API server, storage and Git servers. No cluster, no network, no sleeps.
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { ConditionType, type GitRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { ArtifactTooLargeError } from '@mooring/artifact';
import {
  type CheckoutOptions,
  type CheckoutResult,
  GitAuthError,
  type GitClient,
  type GitOperationOptions,
  type GitRefSpec,
} from '@mooring/git';
import {
  FakeClock,
  KubeClient,
  type KubeObject,
  RetryableError,
  runSteps,
  StalledError,
} from '@mooring/runtime';
import { stepContext } from '@mooring/test/harness/step-context';
import { FakeApiServer, FakeApiTransport } from '../../../../../test/simulation/fake-api-server.ts';
import { FakeArtifactStorage } from '../../../test/fake-artifact-storage.ts';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { storageRefOf } from '../../source-run.ts';
import { keepCurrentArtifact, reconcileSource, recordArtifact, verifyStorage } from '../artifact.ts';
import { resolveIncludes } from './includes.ts';
import { GIT_REPOSITORY_STEPS } from './index.ts';
import { packArtifact } from './pack.ts';
import { readCredentials } from './read-credentials.ts';
import { resolveRevision } from './resolve-revision.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';
import { verifySignature } from './verify-signature.ts';

const NS = 'team';
const COMMIT = 'a'.repeat(40);
const REVISION = `main@sha1:${COMMIT}`;

/** A Git remote that answers from a script: the commit `main` points at and the files it holds. */
class ScriptedGit implements GitClient {
  readonly backend = 'cli' as const;
  head = COMMIT;
  files: Record<string, string> = { 'deploy/app.yaml': 'kind: ConfigMap\n', 'README.md': '# app\n' };
  fail: Error | undefined;
  readonly calls: string[] = [];

  async resolve(url: string, ref: GitRefSpec, opts: GitOperationOptions) {
    this.calls.push(`resolve ${url} ${JSON.stringify(ref)} ${opts.auth ? 'with auth' : 'anonymous'}`);
    if (this.fail) throw this.fail;
    return { commit: this.head, refName: 'refs/heads/main', revision: `main@sha1:${this.head}` };
  }

  async checkout(
    url: string,
    _ref: GitRefSpec,
    dir: string,
    _opts: CheckoutOptions,
  ): Promise<CheckoutResult> {
    this.calls.push(`checkout ${url}`);
    if (this.fail) throw this.fail;
    for (const [path, text] of Object.entries(this.files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    return {
      commit: this.head,
      refName: 'refs/heads/main',
      revision: `main@sha1:${this.head}`,
      head: {
        commit: this.head,
        subject: 'Deploy app v2',
        author: { name: 'dev', email: 'dev@example.com', date: '2026-01-01T00:00:00Z' },
      },
    };
  }

  cloneForWrite(): Promise<CheckoutResult> {
    throw new Error('not used by the source steps');
  }

  async commit(): Promise<string | undefined> {
    throw new Error('not used by the source steps');
  }

  async push(): Promise<void> {
    throw new Error('not used by the source steps');
  }
}

interface World {
  clock: FakeClock;
  server: FakeApiServer;
  transport: FakeApiTransport;
  client: KubeClient;
  git: ScriptedGit;
  storage: FakeArtifactStorage;
  put(obj: KubeObject & { status?: unknown }): Promise<void>;
  runOf(spec?: Partial<GitRepository['spec']>, status?: GitRepository['status']): Promise<Run>;
}

interface Run {
  run: GitRepositoryRun;
  events: { reason: string; message: string; metadata?: Record<string, string> }[];
  condition(type: string): { status: string; reason: string; message: string } | undefined;
}

/** Every run a test made: the steps run one by one leave their scratch folder, which reconcileSource would remove. */
const runs: GitRepositoryRun[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) if (run.scratch) await rm(run.scratch, { recursive: true, force: true });
});

async function world(): Promise<World> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const server = new FakeApiServer({ now: () => clock.now() });
  const transport = new FakeApiTransport(server);
  const client = new KubeClient(transport, { qps: 1e9, burst: 1e9, userAgent: 'mooring-test' });
  const git = new ScriptedGit();
  const storage = new FakeArtifactStorage();
  const put: World['put'] = async (obj) => {
    const { status, ...rest } = obj;
    await client.apply(rest as KubeObject, { fieldManager: 'kubectl', force: true });
    if (status !== undefined)
      await client.applyStatus({ ...rest, status } as KubeObject, { fieldManager: 'source', force: true });
  };
  await put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const runOf: World['runOf'] = async (spec = {}, initial = {}) => {
    const obj: GitRepository = {
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: 'app', namespace: NS },
      spec: { url: 'https://git.example/app', interval: '1m', ref: { branch: 'main' }, ...spec },
    };
    await put(obj);
    const status: NonNullable<GitRepository['status']> = structuredClone(initial);
    const { ctx, events } = stepContext(status, () => clock.now());
    const run: GitRepositoryRun = {
      obj,
      ctx,
      deps: {
        client,
        storage: storage.asStorage,
        storageRoot: '/nonexistent',
        git,
        limits: { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 24 },
      },
      status,
      storage: storage.asStorage,
      storageRef: storageRefOf('GitRepository', obj),
      timeoutMs: 60_000,
    };
    runs.push(run);
    transport.requests.length = 0;
    const condition = (type: string) => status.conditions?.find((c) => c.type === type);
    return { run, events, condition };
  };
  return { clock, server, transport, client, git, storage, put, runOf };
}

const secret = (name: string, data: Record<string, string>) =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  }) as KubeObject;

/** Runs the steps before `name`, so the step under test finds what they fill. */
async function runUpTo(run: GitRepositoryRun, name: string): Promise<void> {
  const i = GIT_REPOSITORY_STEPS.findIndex((s) => s.name === name);
  assert.ok(i >= 0, name);
  await runSteps(GIT_REPOSITORY_STEPS.slice(0, i), run);
}

// ---------------------------------------------------------------------------------------------

test('validate spec: what Mooring cannot do yet stalls with a reason that says so, before Git is asked', async () => {
  const w = await world();
  for (const [spec, reason, message] of [
    [
      { provider: 'azure' },
      Reason.InvalidProviderConfiguration,
      "provider 'azure' is not supported yet; use secretRef credentials",
    ],
    [{ recurseSubmodules: true }, 'UnsupportedConfiguration', 'recurseSubmodules is not supported yet'],
    [
      { proxySecretRef: { name: 'proxy' } },
      'UnsupportedConfiguration',
      'proxySecretRef is not supported yet',
    ],
  ] as const) {
    const { run } = await w.runOf(spec as Partial<GitRepository['spec']>);
    assert.throws(
      () => validateSpec(run),
      (err: unknown) => err instanceof StalledError && err.reason === reason && err.message === message,
    );
  }
  assert.deepEqual(w.git.calls, []);
  const { run } = await w.runOf({ provider: 'generic' });
  assert.equal(validateSpec(run), undefined);
});

test('verify storage: an artifact whose file is gone or corrupt is dropped, to be rebuilt; a good one stays', async () => {
  const w = await world();
  const ref = { kind: 'GitRepository', namespace: NS, name: 'app' };
  const good = w.storage.seed(ref);
  const kept = await w.runOf({}, { artifact: { ...good, revision: REVISION } });
  await verifyStorage(kept.run);
  assert.equal(kept.run.status.artifact?.path, good.path);
  assert.equal(kept.condition(ConditionType.ArtifactInStorage), undefined);

  const lost = w.storage.seed(ref);
  w.storage.files.delete(lost.path);
  const corrupt = w.storage.seed(ref);
  w.storage.files.set(corrupt.path, { ...corrupt, digest: 'sha256:other' });
  for (const gone of [lost, corrupt]) {
    const r = await w.runOf({}, { artifact: { ...gone, revision: REVISION } });
    await verifyStorage(r.run);
    assert.equal(r.run.status.artifact, undefined);
    assert.deepEqual(
      [
        r.condition(ConditionType.ArtifactInStorage)?.status,
        r.condition(ConditionType.ArtifactInStorage)?.reason,
      ],
      ['False', Reason.Progressing],
    );
  }
});

test('read credentials: the secretRef Secret becomes the Git credentials; a missing or malformed one says which', async () => {
  const w = await world();
  await w.put(secret('git', { username: 'bot', password: 's3cret' }));
  const ok = await w.runOf({ secretRef: { name: 'git' } });
  await readCredentials(ok.run);
  assert.deepEqual(ok.run.auth, { username: 'bot', password: 's3cret' });

  const missing = await w.runOf({ secretRef: { name: 'nope' } });
  await assert.rejects(
    readCredentials(missing.run),
    (err: unknown) =>
      err instanceof RetryableError && err.message === `credentials Secret ${NS}/nope not found`,
  );

  await w.put(secret('both', { bearerToken: 't', password: 'p' }));
  const both = await w.runOf({ secretRef: { name: 'both' } });
  await assert.rejects(
    readCredentials(both.run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.InvalidProviderConfiguration &&
      err.message === "Secret both has both 'bearerToken' and 'password': keep one",
  );

  const none = await w.runOf();
  await readCredentials(none.run);
  assert.equal(none.run.auth, undefined);
  assert.deepEqual(w.transport.requests, [], 'no Secret read without a secretRef');
});

test('resolve revision: the commit the ref points at; a refused login is FetchFailed naming the Secret', async () => {
  const w = await world();
  await w.put(secret('git', { username: 'bot', password: 'wrong' }));
  const { run } = await w.runOf({ secretRef: { name: 'git' } });
  await runUpTo(run, 'resolve revision');
  await resolveRevision(run);
  assert.equal(run.revision, REVISION);
  assert.deepEqual(w.git.calls, ['resolve https://git.example/app {"branch":"main"} with auth']);

  w.git.fail = new GitAuthError('Git authentication failed: HTTP 401');
  const refused = await w.runOf({ secretRef: { name: 'git' } });
  await runUpTo(refused.run, 'resolve revision');
  const message = `Git authentication failed with the credentials in Secret ${NS}/git: HTTP 401`;
  await assert.rejects(
    resolveRevision(refused.run),
    (err: unknown) =>
      err instanceof RetryableError && err.reason === Reason.AuthenticationFailed && err.message === message,
  );
  assert.deepEqual(refused.condition(ConditionType.FetchFailed), {
    ...refused.condition(ConditionType.FetchFailed),
    status: 'True',
    reason: Reason.AuthenticationFailed,
    message,
  });
});

test('resolve includes: an included GitRepository without an artifact yet is IncludeUnavailable, retried', async () => {
  const w = await world();
  await w.put({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'lib', namespace: NS },
    spec: { url: 'https://git.example/lib', interval: '1m' },
  } as KubeObject);
  const { run, condition } = await w.runOf({ include: [{ repository: { name: 'lib' } }] });
  await runUpTo(run, 'resolve includes');
  await assert.rejects(
    resolveIncludes(run),
    (err: unknown) =>
      err instanceof RetryableError && err.message === 'included GitRepository lib has no artifact yet',
  );
  assert.equal(condition(ConditionType.IncludeUnavailable)?.status, 'True');
  assert.equal(
    condition(ConditionType.IncludeUnavailable)?.message,
    'included GitRepository lib has no artifact yet',
  );
});

test('keep current artifact: the stored artifact of this revision, built from the same spec, is kept and nothing is fetched', async () => {
  const w = await world();
  const stored = w.storage.seed({ kind: 'GitRepository', namespace: NS, name: 'app' });
  const status: GitRepository['status'] = {
    artifact: { ...stored, url: 'http://old-address/x', revision: REVISION },
    observedIgnore: '*.md',
  };
  const { run, condition } = await w.runOf({ ignore: '*.md' }, status);
  const result = await reconcileSource(GIT_REPOSITORY_STEPS, run);
  assert.deepEqual(result, { message: `stored artifact for revision '${REVISION}'`, revision: REVISION });
  assert.equal(run.upToDate, true);
  assert.deepEqual(
    w.git.calls.map((c) => c.split(' ')[0]),
    ['resolve'],
  );
  assert.equal(run.status.artifact?.url, w.storage.urlFor(stored.path), 'the URL is advertised again');
  assert.equal(condition(ConditionType.ArtifactInStorage)?.status, 'True');
  assert.equal(w.storage.gcCalls.length, 0);
});

test('keep current artifact: a new commit, or a changed spec.ignore, marks ArtifactOutdated and builds', async () => {
  const w = await world();
  const stored = w.storage.seed({ kind: 'GitRepository', namespace: NS, name: 'app' });
  const status = (): GitRepository['status'] => ({
    artifact: { ...stored, revision: REVISION },
    observedIgnore: '*.md',
  });
  w.git.head = 'b'.repeat(40);
  const moved = await w.runOf({ ignore: '*.md' }, status());
  await runUpTo(moved.run, 'keep current artifact');
  keepCurrentArtifact(sameInputs)(moved.run);
  assert.equal(moved.run.upToDate, undefined);
  assert.deepEqual(
    [
      moved.condition(ConditionType.ArtifactOutdated)?.reason,
      moved.condition(ConditionType.ArtifactOutdated)?.message,
    ],
    [Reason.NewRevision, `new upstream revision 'main@sha1:${'b'.repeat(40)}' (was '${REVISION}')`],
  );

  w.git.head = COMMIT;
  const respec = await w.runOf({ ignore: '*.txt' }, status());
  await runUpTo(respec.run, 'keep current artifact');
  keepCurrentArtifact(sameInputs)(respec.run);
  assert.equal(respec.run.upToDate, undefined);
  assert.equal(respec.condition(ConditionType.ArtifactOutdated)?.status, 'True');
});

test('check out, pack and record: the commit is stored filtered by spec.ignore, recorded with what built it, NewArtifact sent', async () => {
  const w = await world();
  const { run, events, condition } = await w.runOf({ ignore: '*.md' });
  const result = await reconcileSource(GIT_REPOSITORY_STEPS, run);
  assert.equal(result.revision, REVISION);
  const artifact = run.status.artifact;
  assert.ok(artifact);
  assert.deepEqual(w.storage.files.get(artifact.path)?.files, ['deploy/app.yaml'], 'README.md is ignored');
  assert.equal(artifact.revision, REVISION);
  assert.equal(run.status.observedIgnore, '*.md');
  assert.deepEqual(
    events.map((e) => [e.reason, e.message, e.metadata?.revision]),
    [['NewArtifact', "stored artifact for commit 'Deploy app v2'", REVISION]],
  );
  assert.deepEqual(w.storage.gcCalls, [{ ref: run.storageRef, keep: artifact.path }]);
  assert.equal(condition(ConditionType.ArtifactInStorage)?.status, 'True');
  assert.equal(condition(ConditionType.ArtifactOutdated), undefined);
  assert.equal(condition(ConditionType.SourceVerified), undefined);

  // The next reconcile finds it up to date: the recorded inputs match the spec.
  w.git.calls.length = 0;
  const again = await w.runOf({ ignore: '*.md' }, structuredClone(run.status));
  await reconcileSource(GIT_REPOSITORY_STEPS, again.run);
  assert.equal(again.run.upToDate, true);
  assert.deepEqual(
    w.git.calls.map((c) => c.split(' ')[0]),
    ['resolve'],
  );
});

test('pack artifact: a checkout over the size limit stalls with StorageOperationFailed', async () => {
  const w = await world();
  const { run, condition } = await w.runOf();
  await runUpTo(run, 'pack artifact');
  w.storage.failNext = new ArtifactTooLargeError('artifact exceeds 16777216 bytes', 16777216);
  await assert.rejects(
    packArtifact(run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.ArchiveOperationFailed &&
      err.message === 'artifact exceeds 16777216 bytes',
  );
  assert.equal(condition(ConditionType.StorageOperationFailed)?.status, 'True');
  assert.equal(run.packed, undefined);
});

test('verify signature: without spec.verify SourceVerified is cleared; a key Secret without *.asc stalls', async () => {
  const w = await world();
  const plain = await w.runOf(
    {},
    {
      conditions: [
        {
          type: ConditionType.SourceVerified,
          status: 'True',
          reason: 'Succeeded',
          message: 'x',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  );
  await runUpTo(plain.run, 'verify signature');
  await verifySignature(plain.run);
  assert.equal(plain.condition(ConditionType.SourceVerified), undefined);

  await w.put(secret('keys', { 'README.txt': 'no keys here' }));
  const { run } = await w.runOf({ verify: { mode: 'HEAD', secretRef: { name: 'keys' } } });
  await runUpTo(run, 'verify signature');
  await assert.rejects(
    verifySignature(run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.VerificationError &&
      err.message === 'Secret keys has no OpenPGP public key (*.asc)',
  );
});

test('record artifact: clears a storage failure and collects old artifacts, keeping the new one', async () => {
  const w = await world();
  const { run, condition } = await w.runOf(
    {},
    {
      conditions: [
        {
          type: ConditionType.StorageOperationFailed,
          status: 'True',
          reason: Reason.ArchiveOperationFailed,
          message: 'disk full',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  );
  const stored = w.storage.seed(run.storageRef);
  run.packed = {
    artifact: { ...stored, revision: REVISION },
    observed: { observedIgnore: undefined, sourceVerificationMode: undefined },
    event: 'stored artifact for commit x',
  };
  await recordArtifact(run);
  assert.equal(condition(ConditionType.StorageOperationFailed), undefined);
  assert.equal(run.status.artifact?.digest, stored.digest);
  assert.deepEqual(w.storage.gcCalls, [{ ref: run.storageRef, keep: stored.path }]);
});
