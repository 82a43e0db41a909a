import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { packDirectory, startArtifactServer } from '@mooring/artifact';
import type { RetryableError } from '@mooring/runtime';
import { ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
import { RenderCache } from './cache.ts';
import { folderSource, type RenderSpec, renderSteps, runRender } from './pipeline.ts';

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
