// Steps of the image-automation kinds' reconciles (./<kind>/index.ts) on their own, through their
// real signatures: a TagStore in a temporary folder, a stub API client and a scripted Git client
// in place of the cluster and the remotes (operators/image-automation/test keeps the real ones).
// No cluster, no network, no sleeps.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import type { GitRepository, ImagePolicy, ImageRepository, ImageUpdateAutomation } from '@mooring/api';
import { type CheckoutResult, type GitClient, PushRejectedError } from '@mooring/git';
import {
  type KubeClient,
  type ReconcileContext,
  RetryableError,
  runSteps,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { type RecordedEvent, stepContext } from '@mooring/test/harness/step-context';
import type { ImagePolicyRun } from '../image-policy-run.ts';
import type { ImageRepositoryRun } from '../image-repository-run.ts';
import type { ImageUpdateAutomationRun } from '../image-update-automation-run.ts';
import { TagStore, tagSetRevision } from '../tag-store.ts';
import { IMAGE_POLICY_STEPS } from './image-policy/index.ts';
import { recordLatest } from './image-policy/record-latest.ts';
import { resolveDigest } from './image-policy/resolve-digest.ts';
import { readTags, resolveRepository } from './image-policy/resolve-repository.ts';
import { selectTag } from './image-policy/select-tag.ts';
import { IMAGE_REPOSITORY_STEPS } from './image-repository/index.ts';
import { recordScan, storeTags } from './image-repository/scan.ts';
import { validateSpec as validateRepositorySpec } from './image-repository/validate-spec.ts';
import { IMAGE_UPDATE_AUTOMATION_STEPS } from './image-update-automation/index.ts';
import { chooseBranches } from './image-update-automation/resolve-source.ts';
import { selectorString } from './image-update-automation/select-policies.ts';
import { validateSpec as validateAutomationSpec } from './image-update-automation/validate-spec.ts';

const NS = 'apps';
const NOW = Date.UTC(2026, 0, 1, 12);

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-image-steps-'));
  temps.push(dir);
  return dir;
}

function contextOf<S extends object>(status: S): { ctx: ReconcileContext; events: RecordedEvent[] } {
  return stepContext(status as ReconcileContext['status'], () => NOW);
}

/** A client that answers GETs from `objects` (by kind/namespace/name) and lists from `lists` (by kind). */
function stubClient(
  objects: Record<string, unknown> = {},
  lists: Record<string, unknown[]> = {},
): KubeClient {
  return {
    getOrUndefined: async (ref: { kind: string; namespace?: string; name: string }) =>
      objects[`${ref.kind}/${ref.namespace}/${ref.name}`],
    list: async (_apiVersion: string, kind: string) => ({ items: lists[kind] ?? [] }),
  } as unknown as KubeClient;
}

async function rejects(
  fn: () => unknown,
  type: new (...args: never[]) => Error,
  reason: string,
  message: RegExp,
) {
  await assert.rejects(
    async () => fn(),
    (err: Error & { reason?: string }) => {
      assert.ok(err instanceof type, `${err.name}: ${err.message}`);
      assert.equal(err.reason, reason);
      assert.match(err.message, message);
      return true;
    },
  );
}

// --- ImageRepository ---------------------------------------------------------------------------

async function repositoryRun(
  spec: Partial<ImageRepository['spec']> = {},
  status: ImageRepository['status'] = {},
  store?: TagStore,
) {
  const obj = {
    apiVersion: 'image.mooring.dev/v1',
    kind: 'ImageRepository',
    metadata: { name: 'web', namespace: NS },
    spec: { image: 'registry.example/team/web', interval: '5m', ...spec },
    status,
  } as ImageRepository;
  const st = structuredClone(status);
  const { ctx, events } = contextOf(st);
  const run: ImageRepositoryRun = {
    obj,
    ctx,
    status: st,
    deps: { client: stubClient(), store: store ?? new TagStore(await tempDir()) },
    namespace: NS,
    name: 'web',
    intervalMs: 5 * 60_000,
  };
  return { run, events };
}

test('ImageRepository validate spec: a provider, a service account, a bad image name or exclusion pattern stall', async () => {
  for (const [spec, reason, message] of [
    [{ provider: 'aws' }, 'InvalidProviderConfiguration', /provider 'aws' is not supported yet/],
    [{ serviceAccountName: 'sa' }, 'UnsupportedConfiguration', /serviceAccountName are not supported/],
    [{ image: 'Not An Image' }, 'ImageURLInvalid', /./],
    [{ exclusionList: ['('] }, 'InvalidExclusionList', /exclusionList entry/],
  ] as const) {
    const { run } = await repositoryRun(spec as Partial<ImageRepository['spec']>);
    await rejects(() => validateRepositorySpec(run), StalledError, reason, message);
  }
  const { run } = await repositoryRun();
  validateRepositorySpec(run);
  assert.equal(run.canonical, 'registry.example/team/web');
  assert.ok(run.exclusions?.[0]?.test('1.0.0.sig'), "Flux's default excludes cosign signatures");
});

test('ImageRepository: fresh stored tags are reported as they are, the scan steps are skipped, the next reconcile comes at the interval', async () => {
  const store = new TagStore(await tempDir());
  await store.write(NS, 'web', ['1.0.0', '1.1.0', '2.0.0']);
  const scanTime = new Date(NOW - 60_000).toISOString();
  const { run, events } = await repositoryRun(
    {},
    {
      canonicalImageName: 'registry.example/team/web',
      observedExclusionList: ['^.*\\.sig$'],
      lastScanResult: { revision: 'sha256:abc', tagCount: 3, scanTime },
    },
    store,
  );
  // registry.example does not resolve: a scan would fail the run.
  const outcome = await runSteps(IMAGE_REPOSITORY_STEPS, run);
  assert.equal(run.fresh, true);
  assert.deepEqual(outcome, { requeueAfterMs: 4 * 60_000 });
  assert.deepEqual(run.result, { message: 'successful scan: found 3 tags', revision: 'sha256:abc' });
  assert.deepEqual(events, []);
});

test('ImageRepository: a scan is due when never scanned, requested, or the image or exclusions changed', async () => {
  const store = new TagStore(await tempDir());
  await store.write(NS, 'web', ['1.0.0']);
  const fresh = {
    canonicalImageName: 'registry.example/team/web',
    observedExclusionList: ['^.*\\.sig$'],
    lastScanResult: { revision: 'sha256:abc', tagCount: 1, scanTime: new Date(NOW).toISOString() },
  };
  const cases: [Partial<ImageRepository['spec']>, ImageRepository['status'], string][] = [
    [{}, {}, 'never scanned'],
    [{}, { ...fresh, canonicalImageName: 'registry.example/team/old' }, 'image changed'],
    [{ exclusionList: ['^dev-'] }, fresh, 'exclusion list changed'],
    [
      {},
      {
        ...fresh,
        lastScanResult: { ...fresh.lastScanResult, scanTime: new Date(NOW - 5 * 60_000).toISOString() },
      },
      'interval elapsed',
    ],
  ];
  for (const [spec, status, due] of cases) {
    const { run } = await repositoryRun(spec, status, store);
    await runSteps(IMAGE_REPOSITORY_STEPS.slice(0, 3), run);
    assert.equal(run.due, due);
    assert.equal(run.fresh, undefined);
  }
});

test('ImageRepository store and record scan: a new tag set is stored with an event; the same set writes no status and no event', async () => {
  const store = new TagStore(await tempDir());
  const tags = ['1.0.0', '1.1.0'];
  const revision = tagSetRevision(tags);
  const { run, events } = await repositoryRun({}, {}, store);
  validateRepositorySpec(run);
  Object.assign(run, { due: 'never scanned', tags, revision });
  await storeTags(run);
  assert.deepEqual(recordScan(run), { requeueAfterMs: 5 * 60_000 });
  assert.deepEqual(await store.read(NS, 'web'), tags);
  assert.equal(run.status.lastScanResult?.revision, revision);
  assert.deepEqual(run.status.lastScanResult?.latestTags, ['1.1.0', '1.0.0']);
  assert.deepEqual(
    events.map((e) => e.message),
    ['successful scan: found 2 tags'],
  );

  const scanned = structuredClone(run.status);
  const again = await repositoryRun(
    {},
    { ...scanned, lastScanResult: { ...scanned.lastScanResult!, scanTime: 'then' } },
    store,
  );
  validateRepositorySpec(again.run);
  Object.assign(again.run, { stored: tags, due: 'interval elapsed', tags, revision });
  await storeTags(again.run);
  recordScan(again.run);
  assert.equal(again.run.unchanged, true);
  assert.equal(again.run.status.lastScanResult?.scanTime, 'then', 'the scan result is left alone');
  assert.deepEqual(again.events, []);
  assert.deepEqual(again.run.result, { message: 'successful scan: found 2 tags', revision });
});

// --- ImagePolicy -------------------------------------------------------------------------------

const SCANNED_REPO = {
  apiVersion: 'image.mooring.dev/v1',
  kind: 'ImageRepository',
  metadata: { name: 'web', namespace: NS },
  spec: { image: 'registry.example/team/web' },
  status: { canonicalImageName: 'registry.example/team/web', lastScanResult: { revision: 'sha256:abc' } },
} as ImageRepository;

async function policyRun(
  spec: Partial<ImagePolicy['spec']> = {},
  status: ImagePolicy['status'] = {},
  objects: Record<string, unknown> = { [`ImageRepository/${NS}/web`]: SCANNED_REPO },
) {
  const obj = {
    apiVersion: 'image.mooring.dev/v1',
    kind: 'ImagePolicy',
    metadata: { name: 'web', namespace: NS },
    spec: { imageRepositoryRef: { name: 'web' }, policy: { semver: { range: '>=1.0.0' } }, ...spec },
  } as ImagePolicy;
  const store = new TagStore(await tempDir());
  const st = structuredClone(status);
  const { ctx, events } = contextOf(st);
  const run: ImagePolicyRun = {
    obj,
    ctx,
    status: st,
    deps: { client: stubClient(objects), store, noCrossNamespaceRefs: false, dependencyRequeueMs: 1000 },
    repoNamespace: NS,
    repoName: 'web',
    what: `ImageRepository ${NS}/web`,
  };
  return { run, events, store };
}

test('ImagePolicy: a missing or unscanned repository waits; a policy with no matching tag waits ten times longer', async () => {
  const missing = await policyRun({}, {}, {});
  await rejects(
    () => resolveRepository(missing.run),
    WaitingError,
    'DependencyNotReady',
    /ImageRepository apps\/web not found/,
  );
  const unscanned = await policyRun();
  await resolveRepository(unscanned.run);
  await rejects(
    () => readTags(unscanned.run),
    WaitingError,
    'DependencyNotReady',
    /has not been scanned yet/,
  );

  const { run, store } = await policyRun({ policy: { semver: { range: '>=3.0.0' } } });
  await store.write(NS, 'web', ['1.0.0', '2.0.0']);
  await runSteps(IMAGE_POLICY_STEPS.slice(0, 2), run);
  await assert.rejects(
    async () => selectTag(run),
    (err: WaitingError) =>
      err instanceof WaitingError &&
      err.reason === 'NoMatchingTag' &&
      err.requeueAfterMs === 10_000 &&
      /no tag of ImageRepository apps\/web \(2 tags\) matches the policy/.test(err.message),
  );
  const invalid = await policyRun({ policy: { semver: { range: 'not a range!' } } });
  invalid.run.tags = ['1.0.0'];
  await rejects(() => selectTag(invalid.run), StalledError, 'InvalidPolicy', /./);
});

test('ImagePolicy: the latest tag is published once with an event, a change names the previous tag, the same image writes nothing', async () => {
  const { run, events, store } = await policyRun();
  await store.write(NS, 'web', ['1.0.0', '1.2.0', '0.9.0']);
  assert.deepEqual(await runSteps(IMAGE_POLICY_STEPS, run), {});
  assert.deepEqual(run.status.latestRef, { name: 'registry.example/team/web', tag: '1.2.0' });
  assert.deepEqual(run.result, {
    message: 'Latest image tag for registry.example/team/web resolved to 1.2.0',
    revision: 'registry.example/team/web:1.2.0',
  });
  assert.deepEqual(
    events.map((e) => e.message),
    ['Latest image tag for registry.example/team/web resolved to 1.2.0'],
  );

  const same = await policyRun({}, structuredClone(run.status));
  same.run.repo = SCANNED_REPO;
  same.run.tag = '1.2.0';
  await resolveDigest(same.run);
  recordLatest(same.run);
  assert.deepEqual(same.events, []);

  const next = await policyRun({}, structuredClone(run.status));
  next.run.repo = SCANNED_REPO;
  next.run.tag = '2.0.0';
  await resolveDigest(next.run);
  recordLatest(next.run);
  assert.deepEqual(next.run.status.observedPreviousRef, { name: 'registry.example/team/web', tag: '1.2.0' });
  assert.deepEqual(
    next.events.map((e) => e.message),
    ['Latest image tag for registry.example/team/web updated from 1.2.0 to 2.0.0'],
  );
});

test('ImagePolicy resolve digest: IfNotPresent keeps the digest the status has for the same tag, without asking the registry', async () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  const { run } = await policyRun(
    { digestReflectionPolicy: 'IfNotPresent' },
    { latestRef: { name: 'registry.example/team/web', tag: '1.2.0', digest } },
  );
  run.repo = SCANNED_REPO;
  run.tag = '1.2.0';
  await resolveDigest(run);
  assert.equal(run.latest?.digest, digest);
  assert.equal(recordLatest(run), undefined);
  assert.equal(run.result?.revision, `registry.example/team/web:1.2.0@${digest}`);
});

// --- ImageUpdateAutomation ---------------------------------------------------------------------

const GIT_REPO = {
  apiVersion: 'source.mooring.dev/v1',
  kind: 'GitRepository',
  metadata: { name: 'site', namespace: NS },
  spec: { url: 'https://git.example/site.git', ref: { branch: 'main' } },
} as GitRepository;

const READY_POLICY = (name: string, tag: string) =>
  ({
    metadata: { name, namespace: NS },
    status: {
      latestRef: { name: 'registry.example/team/web', tag },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: '' },
      ],
    },
  }) as unknown as ImagePolicy;

/** A Git client that clones a one-file tree, commits as told and rejects the first `rejections` pushes. */
class ScriptedGit {
  readonly calls: string[] = [];
  rejections = 0;
  readonly file = 'deploy.yaml';

  get asClient(): GitClient {
    return this as unknown as GitClient;
  }

  async cloneForWrite(_url: string, branch: string, dir: string): Promise<CheckoutResult> {
    this.calls.push(`clone ${branch}`);
    await writeFile(
      join(dir, this.file),
      'image: registry.example/team/web:1.0.0 # {"$imagepolicy": "apps:web"}\n',
    );
    return { revision: `${branch}@sha1:${'1'.repeat(40)}` } as CheckoutResult;
  }

  async commit(dir: string, message: string): Promise<string> {
    this.calls.push(
      `commit ${(await readFile(join(dir, this.file), 'utf8')).trim()} ${message.split('\n')[0]}`,
    );
    return '2'.repeat(40);
  }

  async push(_dir: string, _url: string, refspec: string): Promise<void> {
    this.calls.push(`push ${refspec}`);
    if (this.rejections-- > 0) throw new PushRejectedError('rejected: the branch moved');
  }
}

function automationRun(
  spec: Partial<ImageUpdateAutomation['spec']> = {},
  options: { git?: ScriptedGit; policies?: ImagePolicy[]; maxPushAttempts?: number } = {},
) {
  const obj = {
    apiVersion: 'image.mooring.dev/v1',
    kind: 'ImageUpdateAutomation',
    metadata: { name: 'auto', namespace: NS },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'site' },
      interval: '10m',
      git: { commit: { author: { name: 'Image Bot', email: 'bot@mooring.invalid' } } },
      ...spec,
    },
  } as ImageUpdateAutomation;
  const status: NonNullable<ImageUpdateAutomation['status']> = {};
  const { ctx, events } = contextOf(status);
  const git = options.git ?? new ScriptedGit();
  const run: ImageUpdateAutomationRun = {
    obj,
    ctx,
    status,
    deps: {
      client: stubClient({ [`GitRepository/${NS}/site`]: GIT_REPO }, { ImagePolicy: options.policies ?? [] }),
      git: git.asClient,
      noCrossNamespaceRefs: false,
      dependencyRequeueMs: 1000,
      ...(options.maxPushAttempts ? { maxPushAttempts: options.maxPushAttempts } : {}),
    },
    namespace: NS,
  };
  return { run, events, git };
}

test('ImageUpdateAutomation validate spec and choose branches: another strategy, a bad template or a non-branch ref stall', async () => {
  const strategy = automationRun({ update: { strategy: 'Other' } } as never);
  await rejects(
    () => validateAutomationSpec(strategy.run),
    StalledError,
    'InvalidUpdateStrategy',
    /Other is not supported/,
  );
  const template = automationRun({
    git: { commit: { author: { email: 'bot@x' }, messageTemplate: '{{#unclosed}}' } },
  } as never);
  await rejects(() => validateAutomationSpec(template.run), StalledError, 'InvalidMessageTemplate', /./);

  const tag = automationRun({
    git: { checkout: { ref: { tag: 'v1' } }, commit: { author: { email: 'bot@x' } } },
  } as never);
  tag.run.repo = GIT_REPO;
  await rejects(
    () => chooseBranches(tag.run),
    StalledError,
    'InvalidSourceConfiguration',
    /must be a branch/,
  );

  const pushed = automationRun({
    git: { push: { branch: 'images' }, commit: { author: { email: 'bot@x' } } },
  } as never);
  pushed.run.repo = GIT_REPO;
  chooseBranches(pushed.run);
  assert.deepEqual(pushed.run.branches, { checkout: 'main', push: 'images' });
});

test('ImageUpdateAutomation select policies: the selector as a label query; an unknown operator stalls', () => {
  assert.equal(selectorString(undefined), undefined);
  assert.equal(
    selectorString({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'old', operator: 'DoesNotExist' },
      ],
    }),
    'app=web,tier in (a,b),!old',
  );
  assert.throws(
    () => selectorString({ matchExpressions: [{ key: 'x', operator: 'Near' }] } as never),
    (err: StalledError) => err instanceof StalledError && err.reason === 'InvalidPolicySelector',
  );
});

test('ImageUpdateAutomation: the marked value is rewritten, committed and pushed; a rejected push starts again from a fresh clone', async () => {
  const { run, events, git } = automationRun({}, { policies: [READY_POLICY('web', '2.0.0')] });
  git.rejections = 1;
  assert.deepEqual(await runSteps(IMAGE_UPDATE_AUTOMATION_STEPS, run), {});
  assert.deepEqual(git.calls, [
    'clone main',
    'commit image: registry.example/team/web:2.0.0 # {"$imagepolicy": "apps:web"} Update from image update automation',
    'push HEAD:refs/heads/main',
    'clone main',
    'commit image: registry.example/team/web:2.0.0 # {"$imagepolicy": "apps:web"} Update from image update automation',
    'push HEAD:refs/heads/main',
  ]);
  const revision = `main@sha1:${'2'.repeat(40)}`;
  assert.deepEqual(run.result, { message: `pushed commit '222222222222' to branch 'main'`, revision });
  assert.equal(run.status.lastPushCommit, '2'.repeat(40));
  assert.deepEqual(run.status.observedPolicies, { web: { name: 'registry.example/team/web', tag: '2.0.0' } });
  assert.equal(events.length, 1);
  assert.match(events[0]!.message, /^pushed commit '222222222222' to branch 'main' changing deploy\.yaml\n/);
});

test('ImageUpdateAutomation: nothing to change is no commit; pushes rejected every time give up after maxPushAttempts', async () => {
  const idle = automationRun({}, { policies: [READY_POLICY('web', '1.0.0')] });
  await runSteps(IMAGE_UPDATE_AUTOMATION_STEPS, idle.run);
  assert.deepEqual(idle.git.calls, ['clone main']);
  assert.deepEqual(idle.run.result, {
    message: `repository up to date at 'main@sha1:${'1'.repeat(40)}'`,
    revision: `main@sha1:${'1'.repeat(40)}`,
  });
  assert.deepEqual(idle.events, []);

  const busy = automationRun({}, { policies: [READY_POLICY('web', '2.0.0')], maxPushAttempts: 2 });
  busy.git.rejections = 5;
  await rejects(
    () => runSteps(IMAGE_UPDATE_AUTOMATION_STEPS, busy.run),
    RetryableError,
    'GitOperationFailed',
    /push to branch 'main' was rejected 2 times because the branch kept moving/,
  );
  assert.equal(busy.git.calls.filter((c) => c.startsWith('clone')).length, 2);
});
