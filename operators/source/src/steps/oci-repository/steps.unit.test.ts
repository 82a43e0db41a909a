// Each step of an OCIRepository's reconcile (./index.ts) on its own, through its real signature.
// The API server is the in-memory fake of test/simulation/fake-api-server.ts (credential Secrets),
// storage is operators/source/test/fake-artifact-storage.ts and the registry a scripted stand-in
// for RegistryClient: all fakes, for unit tests; the integration tests in operators/source/test
// keep the real API server, storage and a real registry. No cluster, no network, no sleeps.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { ConditionType, type OCIRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { packDirectory } from '@mooring/artifact';
import { type OciDescriptor, type OciReference, RegistryClient, type ResolvedManifest } from '@mooring/oci';
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
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { storageRefOf } from '../../source-run.ts';
import { keepCurrentArtifact, reconcileSource, verifyStorage } from '../artifact.ts';
import { OCI_REPOSITORY_STEPS } from './index.ts';
import { PackedLayers } from './packed-layers.ts';
import { selectLayer } from './pull-layer.ts';
import { readCredentials } from './read-credentials.ts';
import { resolveRevision } from './resolve-revision.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';

const NS = 'team';
const MANIFEST_DIGEST = `sha256:${'d'.repeat(64)}`;
const TAR = 'application/vnd.cncf.flux.content.v1.tar+gzip';

/** A registry that answers from a script: its tags, one manifest, and the layer's bytes from a file. */
class ScriptedRegistry {
  tags = ['1.0.0', '1.2.0', '1.10.0', '2.0.0', 'latest'];
  layers: OciDescriptor[] = [{ mediaType: TAR, digest: `sha256:${'e'.repeat(64)}`, size: 10 }];
  annotations: Record<string, string> = { 'org.opencontainers.image.revision': 'main@sha1:abc' };
  /** The tar.gz fetchBlob hands out. */
  blob = '';
  readonly calls: string[] = [];

  get asClient(): RegistryClient {
    return this as unknown as RegistryClient;
  }

  async listTags(ref: OciReference): Promise<string[]> {
    this.calls.push(`tags ${ref.host}/${ref.repository}`);
    return this.tags;
  }

  async resolveManifest(ref: OciReference, tagOrDigest: string): Promise<ResolvedManifest> {
    this.calls.push(`manifest ${ref.host}/${ref.repository}:${tagOrDigest}`);
    return {
      digest: MANIFEST_DIGEST,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      annotations: this.annotations,
      manifest: {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.cncf.flux.config.v1+json', digest: 'sha256:0', size: 2 },
        layers: this.layers,
        annotations: this.annotations,
      },
    };
  }

  async fetchBlob(_ref: OciReference, descriptor: { digest: string }, toFile: string): Promise<void> {
    this.calls.push(`blob ${descriptor.digest}`);
    await copyFile(this.blob, toFile);
  }
}

const temps: string[] = [];
const runs: OciRepositoryRun[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) if (run.scratch) await rm(run.scratch, { recursive: true, force: true });
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A layer as `mooring push artifact` makes it: a tar.gz of these files. */
async function layerOf(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-oci-unit-'));
  temps.push(dir);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, 'tree', path, '..'), { recursive: true });
    await writeFile(join(dir, 'tree', path), text);
  }
  await packDirectory(join(dir, 'tree'), join(dir, 'layer.tar.gz'));
  return join(dir, 'layer.tar.gz');
}

interface World {
  client: KubeClient;
  transport: FakeApiTransport;
  registry: ScriptedRegistry;
  storage: FakeArtifactStorage;
  put(obj: KubeObject): Promise<void>;
  runOf(spec?: Partial<OCIRepository['spec']>, status?: OCIRepository['status'], name?: string): Promise<Run>;
}

interface Run {
  run: OciRepositoryRun;
  events: { reason: string; message: string; metadata?: Record<string, string> }[];
  condition(type: string): { status: string; reason: string; message: string } | undefined;
}

async function world(): Promise<World> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const server = new FakeApiServer({ now: () => clock.now() });
  const transport = new FakeApiTransport(server);
  const client = new KubeClient(transport, { qps: 1e9, burst: 1e9, userAgent: 'mooring-test' });
  const registry = new ScriptedRegistry();
  const storage = new FakeArtifactStorage();
  const put: World['put'] = async (obj) => {
    await client.apply(obj, { fieldManager: 'kubectl', force: true });
  };
  await put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const packedLayers = new PackedLayers();
  const runOf: World['runOf'] = async (spec = {}, initial = {}, name = 'app') => {
    const obj: OCIRepository = {
      apiVersion: SOURCE_API_VERSION,
      kind: 'OCIRepository',
      metadata: { name, namespace: NS },
      spec: { url: 'oci://registry.example/org/app', interval: '5m', ...spec },
    };
    await put(obj);
    const status: NonNullable<OCIRepository['status']> = structuredClone(initial);
    const { ctx, events } = stepContext(status, () => clock.now());
    const run: OciRepositoryRun = {
      obj,
      ctx,
      deps: {
        client,
        storage: storage.asStorage,
        limits: { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 24 },
        packedLayers,
      },
      status,
      storage: storage.asStorage,
      storageRef: storageRefOf('OCIRepository', obj),
      timeoutMs: 60_000,
    };
    runs.push(run);
    transport.requests.length = 0;
    const condition = (type: string) => status.conditions?.find((c) => c.type === type);
    return { run, events, condition };
  };
  return { client, transport, registry, storage, put, runOf };
}

/** Runs the steps of the list from `from` up to (not including) `to`; `to` undefined runs to the end. */
async function runSpan(run: OciRepositoryRun, from: string | undefined, to?: string): Promise<void> {
  const index = (name: string | undefined, end: number) => {
    if (name === undefined) return end;
    const i = OCI_REPOSITORY_STEPS.findIndex((s) => s.name === name);
    assert.ok(i >= 0, name);
    return i;
  };
  await runSteps(OCI_REPOSITORY_STEPS.slice(index(from, 0), index(to, OCI_REPOSITORY_STEPS.length)), run);
}

/** The steps through `read credentials`, then the scripted registry in place of the real client. */
async function withRegistry(w: World, run: OciRepositoryRun): Promise<void> {
  await runSpan(run, undefined, 'resolve revision');
  assert.ok(run.registry instanceof RegistryClient, 'read credentials made a registry client');
  run.registry = w.registry.asClient;
}

// ---------------------------------------------------------------------------------------------

test('validate spec: a bad URL, a provider or signature verification stall before the registry is asked', async () => {
  const w = await world();
  for (const [spec, reason, message] of [
    [{ url: 'https://registry.example/org/app' }, Reason.URLInvalid, /must start with oci:\/\//],
    [{ provider: 'aws' }, Reason.InvalidProviderConfiguration, /provider 'aws' is not supported yet/],
    [
      { verify: { provider: 'cosign' } },
      Reason.VerificationError,
      /signature verification .* is not supported yet/,
    ],
  ] as const) {
    const { run } = await w.runOf(spec as Partial<OCIRepository['spec']>);
    assert.throws(
      () => validateSpec(run),
      (err: unknown) => err instanceof StalledError && err.reason === reason && message.test(err.message),
    );
  }
  const { run } = await w.runOf();
  validateSpec(run);
  assert.deepEqual(run.target, { host: 'registry.example', repository: 'org/app' });
});

test('verify storage: an OCI artifact gone from storage is dropped, to be pulled again', async () => {
  const w = await world();
  const lost = w.storage.seed({ kind: 'OCIRepository', namespace: NS, name: 'app' });
  w.storage.files.delete(lost.path);
  const { run, condition } = await w.runOf(
    {},
    { artifact: { ...lost, revision: `latest@${MANIFEST_DIGEST}` } },
  );
  await verifyStorage(run);
  assert.equal(run.status.artifact, undefined);
  assert.equal(condition(ConditionType.ArtifactInStorage)?.status, 'False');
});

test('read credentials: a secretRef Secret without .dockerconfigjson stalls; a good one is used for its host', async () => {
  const w = await world();
  const put = (name: string, data: Record<string, string>) =>
    w.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    } as KubeObject);
  await put('wrong', { username: 'bot' });
  const wrong = await w.runOf({ secretRef: { name: 'wrong' } });
  validateSpec(wrong.run);
  await assert.rejects(
    readCredentials(wrong.run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.InvalidProviderConfiguration &&
      err.message === "Secret wrong has no '.dockerconfigjson' key",
  );
  await put('pull', {
    '.dockerconfigjson': JSON.stringify({
      auths: { 'registry.example': { auth: Buffer.from('bot:pw').toString('base64') } },
    }),
  });
  const ok = await w.runOf({ secretRef: { name: 'pull' } });
  validateSpec(ok.run);
  await readCredentials(ok.run);
  assert.ok(ok.run.registry instanceof RegistryClient);
});

test('resolve revision: a tag is <tag>@<manifest digest>; semver picks the highest match; no match is retried', async () => {
  const w = await world();
  const tagged = await w.runOf({ ref: { tag: 'v1' } });
  await withRegistry(w, tagged.run);
  await resolveRevision(tagged.run);
  assert.equal(tagged.run.revision, `v1@${MANIFEST_DIGEST}`);

  const ranged = await w.runOf({ ref: { semver: '>=1.0.0 <2.0.0' } });
  await withRegistry(w, ranged.run);
  await resolveRevision(ranged.run);
  assert.equal(ranged.run.revision, `1.10.0@${MANIFEST_DIGEST}`);

  const digest = await w.runOf({ ref: { digest: MANIFEST_DIGEST } });
  await withRegistry(w, digest.run);
  await resolveRevision(digest.run);
  assert.equal(digest.run.revision, MANIFEST_DIGEST);

  const none = await w.runOf({ ref: { semver: '>=3.0.0' } });
  await withRegistry(w, none.run);
  await assert.rejects(
    resolveRevision(none.run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.OCIArtifactPullFailed &&
      err.message === "no tag of registry.example/org/app matches semver range '>=3.0.0'",
  );

  const badFilter = await w.runOf({ ref: { semver: '>=1.0.0', semverFilter: '(' } });
  await withRegistry(w, badFilter.run);
  await assert.rejects(
    resolveRevision(badFilter.run),
    (err: unknown) => err instanceof StalledError && err.reason === 'InvalidSemverFilter',
  );
});

test('keep current artifact: same digest, layer selector and ignore keep the artifact and pull nothing', async () => {
  const w = await world();
  const stored = w.storage.seed({ kind: 'OCIRepository', namespace: NS, name: 'app' });
  const status = (): OCIRepository['status'] => ({
    artifact: { ...stored, revision: `latest@${MANIFEST_DIGEST}` },
    observedIgnore: '*.md',
  });
  const same = await w.runOf({ ignore: '*.md' }, status());
  await withRegistry(w, same.run);
  await runSpan(same.run, 'resolve revision');
  assert.equal(same.run.upToDate, true);
  assert.equal(same.run.status.url, w.storage.urlFor(stored.path));
  assert.deepEqual(
    w.registry.calls.filter((c) => c.startsWith('blob')),
    [],
  );
  assert.equal(w.storage.gcCalls.length, 0);

  const respec = await w.runOf(
    { ignore: '*.md', layerSelector: { mediaType: TAR, operation: 'copy' } },
    status(),
  );
  await withRegistry(w, respec.run);
  await runSpan(respec.run, 'resolve revision', 'select layer');
  assert.equal(keepCurrentArtifact(sameInputs)(respec.run), undefined);
  assert.equal(respec.run.upToDate, undefined);
  assert.equal(respec.condition(ConditionType.ArtifactOutdated)?.status, 'True');
});

test('select layer: no layer of the media type asked for stalls; a layer over the limit is retried', async () => {
  const w = await world();
  const missing = await w.runOf({ layerSelector: { mediaType: 'application/x-other' } });
  await withRegistry(w, missing.run);
  await runSpan(missing.run, 'resolve revision', 'select layer');
  const revision = `latest@${MANIFEST_DIGEST}`;
  assert.throws(
    () => selectLayer(missing.run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.OCIArtifactLayerOperationFailed &&
      err.message === `no layer with media type 'application/x-other' in ${revision}`,
  );
  assert.equal(missing.condition(ConditionType.FetchFailed)?.reason, Reason.OCIArtifactLayerOperationFailed);

  w.registry.layers = [{ mediaType: TAR, digest: `sha256:${'f'.repeat(64)}`, size: 1 << 25 }];
  const big = await w.runOf();
  await withRegistry(w, big.run);
  await runSpan(big.run, 'resolve revision', 'select layer');
  assert.throws(
    () => selectLayer(big.run),
    (err: unknown) =>
      err instanceof RetryableError && /is 33554432 bytes, over the 16777216-byte limit/.test(err.message),
  );
});

test('pull, pack, record and advertise: the layer is extracted, filtered by spec.ignore, stored and its URL advertised', async () => {
  const w = await world();
  w.registry.blob = await layerOf({ 'deploy/app.yaml': 'kind: ConfigMap\n', 'notes.md': '# notes\n' });
  const { run, events, condition } = await w.runOf({ ignore: '*.md' });
  await withRegistry(w, run);
  await runSpan(run, 'resolve revision');
  const revision = `latest@${MANIFEST_DIGEST}`;
  const artifact = run.status.artifact;
  assert.ok(artifact);
  assert.equal(artifact.revision, revision);
  assert.deepEqual(artifact.metadata, { 'org.opencontainers.image.revision': 'main@sha1:abc' });
  assert.deepEqual(w.storage.files.get(artifact.path)?.files, ['deploy/app.yaml']);
  assert.equal(run.status.url, artifact.url);
  assert.equal(run.status.observedIgnore, '*.md');
  assert.deepEqual(
    events.map((e) => [e.reason, e.message]),
    [['NewArtifact', `stored artifact with revision '${revision}' from 'oci://registry.example/org/app'`]],
  );
  assert.equal(condition(ConditionType.ArtifactInStorage)?.status, 'True');
  assert.deepEqual(w.storage.gcCalls, [{ ref: run.storageRef, keep: artifact.path }]);
});

test("reuse packed layer: a second source of the same repository and layer copies the first one's artifact and pulls nothing", async () => {
  const w = await world();
  w.registry.blob = await layerOf({ 'deploy/app.yaml': 'kind: ConfigMap\n', 'notes.md': '# notes\n' });
  const first = await w.runOf({ ignore: '*.md' }, {}, 'first');
  await withRegistry(w, first.run);
  await runSpan(first.run, 'resolve revision');
  const firstArtifact = first.run.status.artifact!;

  w.registry.calls.length = 0;
  const second = await w.runOf({ ignore: '*.md' }, {}, 'second');
  await withRegistry(w, second.run);
  await runSpan(second.run, 'resolve revision');
  const artifact = second.run.status.artifact!;
  assert.deepEqual(w.registry.calls, [`manifest registry.example/org/app:latest`], 'no blob is pulled');
  assert.equal(artifact.digest, firstArtifact.digest);
  assert.equal(artifact.path.split('/').slice(0, 3).join('/'), `ocirepository/${NS}/second`);
  assert.equal(artifact.revision, `latest@${MANIFEST_DIGEST}`);
  assert.deepEqual(w.storage.files.get(artifact.path)?.files, ['deploy/app.yaml']);
  assert.deepEqual(
    second.events.map((e) => e.reason),
    ['NewArtifact'],
  );
});

test('reuse packed layer: another repository URL, other ignore rules, or an artifact gone from storage pull the layer again', async () => {
  const w = await world();
  w.registry.blob = await layerOf({ 'app.yaml': 'kind: ConfigMap\n', 'notes.md': '# notes\n' });
  const first = await w.runOf({}, {}, 'first');
  await withRegistry(w, first.run);
  await runSpan(first.run, 'resolve revision');
  const pulls = async (spec: Partial<OCIRepository['spec']>, name: string) => {
    w.registry.calls.length = 0;
    const { run } = await w.runOf(spec, {}, name);
    await withRegistry(w, run);
    await runSpan(run, 'resolve revision');
    return w.registry.calls.filter((c) => c.startsWith('blob')).length;
  };
  // Same digest, another repository: its own pull, so no digest opens another repository's layer.
  assert.equal(await pulls({ url: 'oci://registry.example/org/other' }, 'other-url'), 1);
  assert.equal(await pulls({ ignore: '*.md' }, 'other-ignore'), 1);
  assert.equal(await pulls({}, 'same'), 0);
  // The artifact the memo names was collected: the copy is refused and the layer pulled again.
  w.storage.files.delete(first.run.status.artifact!.path);
  for (const [path, stored] of w.storage.files) if (stored.ref.name === 'same') w.storage.files.delete(path);
  assert.equal(await pulls({}, 'after-gc'), 1);
  assert.equal(await pulls({}, 'after-gc-2'), 0, 'the new artifact is remembered');
});

test('pack artifact: layerSelector.operation copy stores the layer as it is, and the scratch folder goes', async () => {
  const w = await world();
  w.registry.blob = await layerOf({ 'app.yaml': 'kind: ConfigMap\n' });
  const { run } = await w.runOf({ layerSelector: { mediaType: TAR, operation: 'copy' } });
  await withRegistry(w, run);
  const result = await reconcileSource(OCI_REPOSITORY_STEPS.slice(3), run);
  assert.equal(result.revision, `latest@${MANIFEST_DIGEST}`);
  assert.deepEqual(w.storage.files.get(run.status.artifact?.path ?? '')?.files, ['layer.tar.gz']);
  assert.deepEqual(run.status.observedLayerSelector, { mediaType: TAR, operation: 'copy' });
  assert.ok(run.scratch && !existsSync(run.scratch), 'the scratch folder with the layer is removed');
});
