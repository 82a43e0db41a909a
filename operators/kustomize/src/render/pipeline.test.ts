import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { packDirectory, startArtifactServer } from '@mooring/artifact';
import type { RetryableError } from '@mooring/runtime';
import { ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
import { RenderCache } from './cache.ts';
import { folderSource, type Rendered, type RenderSpec, renderSteps, runRender } from './pipeline.ts';

const SOPS = join(import.meta.dirname, '../../testdata/sops');

/** A folder with a variable, a SOPS Secret and a SOPS dotenv for a generator, under `deploy/`. */
async function tree(t: import('node:test').TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-render-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'deploy'));
  await writeFile(
    join(dir, 'deploy/kustomization.yaml'),
    [
      'resources: [app.yaml, db.enc.yaml]',
      'secretGenerator:',
      '  - name: app-env',
      '    envs: [app.enc.env]',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'deploy/app.yaml'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  greeting: ${greeting}\n  size: "${replicas}x"\n',
  );
  await copyFile(join(SOPS, 'secret-stringdata.enc.yaml'), join(dir, 'deploy/db.enc.yaml'));
  await copyFile(join(SOPS, 'app.enc.env'), join(dir, 'deploy/app.enc.env'));
  return dir;
}

/** `dir` packed and served as a source's artifact. */
async function serve(t: import('node:test').TestContext, dir: string): Promise<RenderInputs['artifact']> {
  const storage = await mkdtemp(join(tmpdir(), 'mooring-render-storage-'));
  t.after(() => rm(storage, { recursive: true, force: true }));
  const folder = join(storage, 'gitrepository/ns/repo');
  await mkdir(folder, { recursive: true });
  const packed = await packDirectory(dir, join(storage, 'packing.tar.gz'));
  const file = `${packed.digest.slice('sha256:'.length)}.tar.gz`;
  await rename(join(storage, 'packing.tar.gz'), join(folder, file));
  const server = await startArtifactServer({ root: storage, host: '127.0.0.1', port: 0 });
  t.after(() => server.close());
  return {
    path: `gitrepository/ns/repo/${file}`,
    url: `${server.url}/gitrepository/ns/repo/${file}`,
    revision: 'main@sha1:0123456789abcdef0123456789abcdef01234567',
    digest: packed.digest,
    lastUpdateTime: '2025-01-01T00:00:00Z',
  };
}

const spec = async (): Promise<RenderSpec> => ({
  path: './deploy',
  overrides: { targetNamespace: 'apps', namePrefix: 'p-', commonMetadata: { labels: { team: 'ml' } } },
  decryption: { ageIdentities: [(await readFile(join(SOPS, 'age.agekey'), 'utf8')).trim()] },
  substitute: {
    vars: { greeting: 'hello', replicas: '2' },
    options: { strict: true, strategy: 'WithVariables' },
  },
  owner: { name: 'apps', namespace: 'flux-system' },
});

test('the artifact source and the folder source render the same objects through the same steps', async (t) => {
  const dir = await tree(t);
  const inputs = await spec();
  const cache = new RenderCache(4, new ArtifactCache());
  const lookups: boolean[] = [];
  const artifactInputs = { ...inputs, artifact: await serve(t, dir) };
  const fromArtifact = await cache.get(artifactInputs, AbortSignal.timeout(60_000), undefined, (hit) =>
    lookups.push(hit),
  );
  // The same inputs again are a hit (mooring_render_cache_requests_total), with the same objects.
  const again = await cache.get(artifactInputs, AbortSignal.timeout(60_000), undefined, (hit) =>
    lookups.push(hit),
  );
  assert.deepEqual(lookups, [false, true]);
  assert.deepEqual(again.manifests, fromArtifact.manifests);
  const fromFolder = await runRender(
    renderSteps(folderSource(dir)),
    { ...inputs, path: 'deploy' },
    new AbortController().signal,
  );
  assert.deepEqual(fromFolder.manifests, fromArtifact.manifests);
  assert.equal(fromFolder.digest, fromArtifact.digest);

  // Not vacuous: substituted, decrypted (the Secret and the generator's dotenv), labelled.
  const byName = new Map(
    fromFolder.manifests.map((m) => [m.metadata.name?.replace(/-[a-z0-9]{10}$/, ''), m]),
  );
  assert.deepEqual(byName.get('p-app')?.data, { greeting: 'hello', size: '2x' });
  assert.equal(
    (byName.get('p-db-credentials')!.stringData as Record<string, string>).password,
    's3cr3t-Pa55word',
  );
  assert.equal(
    Buffer.from((byName.get('p-app-env')!.data as Record<string, string>).DB_USER!, 'base64').toString(),
    'admin',
  );
  for (const m of fromFolder.manifests) {
    assert.equal(m.metadata.namespace, 'apps');
    assert.deepEqual(m.metadata.labels, {
      ...(m.metadata.name === 'p-db-credentials' ? { team: 'payments' } : {}),
      team: 'ml',
      'kustomize.mooring.dev/name': 'apps',
      'kustomize.mooring.dev/namespace': 'flux-system',
    });
  }
});

/** Counts the builds that reached the artifact: each build fetches (or finds) its artifact once. */
class CountingArtifacts extends ArtifactCache {
  gets = 0;
  override get(...args: Parameters<ArtifactCache['get']>): ReturnType<ArtifactCache['get']> {
    this.gets++;
    return super.get(...args);
  }
}

/** The tree served as an artifact, and a render cache that counts the artifact fetches it makes. */
async function countedCache(t: import('node:test').TestContext) {
  const base = await spec();
  const artifact = await serve(t, await tree(t));
  const artifacts = new CountingArtifacts();
  return {
    base,
    artifact,
    artifacts,
    cache: new RenderCache(16, artifacts),
    signal: AbortSignal.timeout(60_000),
  };
}

/** The rendered ConfigMap of the tree. */
const app = (r: Rendered) => r.manifests.find((m) => m.metadata.name === 'p-app')!;

test('Kustomizations on sources of one digest build once, each with its own variables and owner, and a different reader builds again', async (t) => {
  const { base, artifact, artifacts, cache, signal } = await countedCache(t);
  const reader = '{"impersonate":{"user":"system:serviceaccount:flux-system:deployer"}}';
  const as = (name: string, greeting: string, url: string, who = reader): RenderInputs => ({
    ...base,
    substitute: { ...base.substitute!, vars: { ...base.substitute!.vars, greeting } },
    owner: { name, namespace: 'flux-system' },
    artifact: { ...artifact, url },
    reader: who,
  });
  // Two sources serving the same artifact under different URLs, as 1000 OCIRepositories on one tag do.
  const [one, two] = await Promise.all([
    cache.get(as('one', 'hello', artifact.url), signal),
    cache.get(as('two', 'bonjour', `${artifact.url}?second-source`), signal),
  ]);
  assert.equal(artifacts.gets, 1, 'one build for both');
  assert.deepEqual(app(one).data, { greeting: 'hello', size: '2x' });
  assert.deepEqual(app(two).data, { greeting: 'bonjour', size: '2x' });
  assert.equal(app(one).metadata.labels?.['kustomize.mooring.dev/name'], 'one');
  assert.equal(app(two).metadata.labels?.['kustomize.mooring.dev/name'], 'two');
  assert.notEqual(one.digest, two.digest);
  // A chart's lookup would read as another identity: that render builds for itself.
  const other = await cache.get(
    as('three', 'hola', artifact.url, '{"impersonate":{"user":"system:serviceaccount:team-b:deployer"}}'),
    signal,
  );
  assert.equal(artifacts.gets, 2);
  assert.deepEqual(app(other).data, { greeting: 'hola', size: '2x' });
});

test('each reconcile gets its own copy of a kept render: what one changes, the next does not see', async (t) => {
  const { base, artifact, artifacts, cache, signal } = await countedCache(t);
  const inputs = { ...base, artifact };
  const first = await cache.get(inputs, signal);
  // What the apply steps do to their copy (labels, a namespace) must not reach the cache.
  app(first).data = { greeting: 'changed' };
  first.manifests.pop();
  const again = await cache.get(inputs, signal);
  assert.equal(artifacts.gets, 1, 'the second get is a hit');
  assert.equal(again.digest, first.digest);
  assert.equal(again.manifests.length, first.manifests.length + 1);
  assert.deepEqual(app(again).data, { greeting: 'hello', size: '2x' });
  // Another owner finishes the same kept build: the first render's finishing did not change it.
  const other = await cache.get({ ...inputs, owner: { name: 'other', namespace: 'flux-system' } }, signal);
  assert.equal(artifacts.gets, 1);
  assert.equal(app(other).metadata.labels?.['kustomize.mooring.dev/name'], 'other');
  assert.deepEqual(app(other).data, { greeting: 'hello', size: '2x' });
});

test('a caller that stops waiting does not fail the shared build for the others', async (t) => {
  const dir = await tree(t);
  const base = await spec();
  const artifact = await serve(t, dir);
  const cache = new RenderCache(16, new ArtifactCache());
  const gone = new AbortController();
  const first = cache.get({ ...base, artifact, owner: { name: 'a', namespace: 'x' } }, gone.signal);
  const second = cache.get(
    { ...base, artifact, owner: { name: 'b', namespace: 'x' } },
    AbortSignal.timeout(60_000),
  );
  gone.abort(new Error('superseded'));
  await assert.rejects(first, /superseded/);
  const ok = await second;
  assert.ok(ok.manifests.some((m) => m.metadata.name === 'p-app'));
});

test('the step lists differ only in their source steps', () => {
  const names = (steps: readonly { name: string }[]) => steps.map((s) => s.name);
  const common = ['decrypt', 'build', 'refuse ciphertext', 'substitute variables', 'label owner'];
  assert.deepEqual(names(renderSteps(artifactSource())), [
    'fetch and verify artifact',
    'check path',
    ...common,
  ]);
  assert.deepEqual(names(renderSteps(folderSource('/'))), ['read folder', ...common]);
});

test('ciphertext is refused before substitution sees it, with the reason and message the operator reports', async (t) => {
  const dir = await tree(t);
  const { decryption: _none, ...inputs } = await spec();
  const failed = await runRender(
    renderSteps(folderSource(dir)),
    { ...inputs, path: 'deploy', substitute: { vars: {}, options: { strict: true, strategy: 'Always' } } },
    new AbortController().signal,
  ).then(
    () => assert.fail('rendered ciphertext'),
    (err: RetryableError) => err,
  );
  assert.equal(failed.reason, 'BuildFailed');
  assert.match(
    failed.message,
    /SOPS-encrypted but spec.decryption is not set: refusing to apply ciphertext$/,
  );
});
