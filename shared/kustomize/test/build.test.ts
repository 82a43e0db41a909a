import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build, createConfinedFs, KustomizeError, toYAML } from '../src/index.ts';

const testdata = join(dirname(fileURLToPath(import.meta.url)), 'testdata');

/** Builds `path` under testdata and returns the YAML text. */
async function render(root: string, path: string): Promise<string> {
  return toYAML(await build(createConfinedFs(root), path));
}

// Expected outputs were produced by the Go kustomize v5.8.0 binary (`kustomize build <dir>`).
describe('build matches kustomize v5.8.0 byte for byte', () => {
  it('an overlay with namespace, prefix/suffix, commonLabels, images, replicas, a component and a merging generator', async () => {
    const expected = readFileSync(join(testdata, 'overlay/expected-overlay.yaml'), 'utf8');
    assert.equal(await render(join(testdata, 'overlay'), 'overlay'), expected);
  });

  it('buildMetadata origin annotations and managed-by label, fifo order, local-config dropped', async () => {
    const expected = readFileSync(join(testdata, 'overlay/expected-meta.yaml'), 'utf8');
    assert.equal(await render(join(testdata, 'overlay'), 'meta'), expected);
  });

  it('transformer annotations, and a namespace inherited by bases and components as in kustomize 5.8.0', async () => {
    const expected = readFileSync(join(testdata, 'overlay/expected-transformations.yaml'), 'utf8');
    assert.equal(await render(join(testdata, 'overlay'), 'transformations'), expected);
  });

  it('generators: literals, files, key=path, binary data, envs, options, generatorOptions, secret type', async () => {
    const expected = readFileSync(join(testdata, 'generators/expected.yaml'), 'utf8');
    assert.equal(await render(testdata, 'generators'), expected);
  });

  it('patches: file and inline SMP, JSON 6902 by target, a CRD patch, patchesStrategicMerge, patchesJson6902, replacements', async () => {
    const expected = readFileSync(join(testdata, 'patches/expected.yaml'), 'utf8');
    assert.equal(await render(testdata, 'patches'), expected);
  });

  it('scalars: YAML 1.1 look-alikes quoted, Go number syntax, folding at 80 columns, literal blocks', async () => {
    const expected = readFileSync(join(testdata, 'scalars/expected.yaml'), 'utf8');
    assert.equal(await render(testdata, 'scalars'), expected);
  });
});

describe('build errors', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tree = (files: Record<string, string>): string => {
    const root = mkdtempSync(join(tmpdir(), 'mooring-kustomize-'));
    dirs.push(root);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    return root;
  };
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

  it('refuses two resources with the same id', async () => {
    const root = tree({
      'kustomization.yaml': 'resources: [a.yaml, b.yaml]\n',
      'a.yaml': cm('x'),
      'b.yaml': cm('x'),
    });
    await assert.rejects(
      build(createConfinedFs(root), '.'),
      /may not add resource with an already registered id/,
    );
  });

  it('refuses a generator merging into a ConfigMap that does not exist', async () => {
    const root = tree({
      'kustomization.yaml': 'configMapGenerator:\n- name: nope\n  behavior: merge\n  literals: [a=b]\n',
    });
    await assert.rejects(build(createConfinedFs(root), '.'), /does not exist; cannot merge or replace/);
  });

  it('refuses a Component used as a resource and a Kustomization used as a component', async () => {
    const root = tree({
      'kustomization.yaml': 'resources: [comp]\n',
      'comp/kustomization.yaml':
        'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [../a.yaml]\n',
      'a.yaml': cm('a'),
      'k2/kustomization.yaml': 'components: [../plain]\n',
      'plain/kustomization.yaml': 'resources: [../a.yaml]\n',
    });
    await assert.rejects(build(createConfinedFs(root), '.'), /expected kind != 'Component'/);
    await assert.rejects(build(createConfinedFs(root), 'k2'), /expected kind 'Component'/);
  });

  it('refuses a directory without a kustomization unless Flux mode is on', async () => {
    const root = tree({ 'apps/a.yaml': cm('a'), 'apps/sub/b.yml': cm('b'), 'apps/readme.txt': 'hi' });
    await assert.rejects(build(createConfinedFs(root), 'apps'), KustomizeError);
    const out = await build(createConfinedFs(root), 'apps', { generateWhenMissing: true });
    assert.deepEqual(
      out.map((r) => (r.object.metadata as { name: string }).name),
      ['a', 'b'],
    );
  });

  it('Flux mode merges a Kustomization spec: targetNamespace, prefix, images and commonMetadata', async () => {
    const root = tree({
      'apps/deploy.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.0\n',
      'apps/nested/kustomization.yaml': 'resources: [cm.yaml]\n',
      'apps/nested/cm.yaml': cm('settings'),
    });
    const out = await build(createConfinedFs(root), 'apps', {
      generateWhenMissing: true,
      overrides: {
        targetNamespace: 'team-a',
        namePrefix: 'a-',
        images: [{ name: 'nginx', newTag: '1.25' }],
        commonMetadata: { labels: { owner: 'team-a' } },
      },
    });
    const yaml = toYAML(out);
    assert.match(yaml, /name: a-settings\n {2}namespace: team-a/);
    assert.match(yaml, /image: nginx:1\.25/);
    assert.match(yaml, /labels:\n {4}owner: team-a\n {2}name: a-web/);
  });

  it('keeps files inside the kustomization directory unless load restrictions are off, as Flux builds', async () => {
    const root = tree({
      'app/kustomization.yaml': 'resources: [../shared.yaml]\n',
      'shared.yaml': cm('shared'),
    });
    await assert.rejects(
      build(createConfinedFs(root), 'app'),
      /security; file 'shared.yaml' is not in or below 'app'/,
    );
    const out = await build(createConfinedFs(root), 'app', { loadRestrictions: 'none' });
    assert.equal(out.length, 1);
  });

  it('Flux mode adds spec.patches and spec.components, skipping missing components when asked', async () => {
    const root = tree({
      'apps/cm.yaml': cm('settings'),
      'components/extra/kustomization.yaml':
        'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  extra: "on"\n',
    });
    const options = {
      generateWhenMissing: true,
      loadRestrictions: 'none' as const,
      overrides: {
        patches: [{ patch: '- op: add\n  path: /data\n  value: {k: v}\n', target: { kind: 'ConfigMap' } }],
        components: ['../components/extra', '../components/missing'],
        ignoreMissingComponents: true,
      },
    };
    const yaml = toYAML(await build(createConfinedFs(root), 'apps', options));
    assert.equal(
      yaml,
      'apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  annotations:\n    extra: "on"\n  name: settings\n',
    );
    const strict = { ...options, overrides: { ...options.overrides, ignoreMissingComponents: false } };
    await assert.rejects(build(createConfinedFs(root), 'apps', strict), KustomizeError);
  });

  it("holds patches to the build's YAML limits", async () => {
    const root = tree({
      'kustomization.yaml': 'resources: [a.yaml]\npatches: [{path: patch.yaml}]\n',
      'a.yaml': cm('a'),
      'patch.yaml': `${cm('a')}data:\n  x: &v value\n  y: *v\n  z: *v\n  w: *v\n`,
    });
    const yaml = toYAML(await build(createConfinedFs(root), '.'));
    assert.match(yaml, /w: value/);
    await assert.rejects(
      build(createConfinedFs(root), '.', { limits: { maxAliasCount: 2 } }),
      /patch\.yaml: YAML expands too many aliases \(limit 2\)/,
    );
  });

  it('refuses a YAML file that is not Kubernetes YAML in Flux mode', async () => {
    const root = tree({ 'apps/values.yaml': 'replicaCount: 2\n' });
    await assert.rejects(
      build(createConfinedFs(root), 'apps', { generateWhenMissing: true }),
      /failed to decode Kubernetes YAML from apps\/values\.yaml/,
    );
  });

  it('names the whole path, the line and the column of a YAML syntax error in any file the build reads', async () => {
    const bad = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n labels: {}\n';
    const at = 'invalid YAML at line 5, column 1: All mapping items must start at the same column';
    const overlay = (extra: Record<string, string>) =>
      tree({
        'apps/base/kustomization.yaml': 'resources: [deploy.yaml]\n',
        'apps/base/deploy.yaml': cm('a'),
        ...extra,
      });
    const refused = async (root: string, message: string) => {
      const error = await build(createConfinedFs(root), 'apps/staging').then(
        () => assert.fail('the build succeeded'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof KustomizeError);
      assert.ok(error.message.includes(message), error.message);
    };
    await refused(
      overlay({ 'apps/staging/kustomization.yaml': 'resources: [../base]\n', 'apps/base/deploy.yaml': bad }),
      `apps/base/deploy.yaml: ${at}`,
    );
    await refused(
      overlay({ 'apps/staging/kustomization.yaml': 'resources: [../base]\nnamespace: x\n  y: z\n' }),
      'apps/staging/kustomization.yaml: invalid YAML at line 2, column 12:',
    );
    for (const field of ['patches: [{path: patch.yaml}]', 'patchesStrategicMerge: [patch.yaml]']) {
      await refused(
        overlay({
          'apps/staging/kustomization.yaml': `resources: [../base]\n${field}\n`,
          'apps/staging/patch.yaml': bad,
        }),
        `apps/staging/patch.yaml: ${at}`,
      );
    }
    await refused(
      overlay({
        'apps/staging/kustomization.yaml': 'resources: [../base]\nreplacements: [{path: r.yaml}]\n',
        'apps/staging/r.yaml': '- source: {kind: ConfigMap}\n targets: []\n',
      }),
      'apps/staging/r.yaml: invalid YAML at line 2, column',
    );
    await refused(
      overlay({
        'apps/staging/kustomization.yaml': 'resources: [../base]\nopenapi: {path: schema.yaml}\n',
        'apps/staging/schema.yaml': bad,
      }),
      `apps/staging/schema.yaml: ${at}`,
    );
  });
});
