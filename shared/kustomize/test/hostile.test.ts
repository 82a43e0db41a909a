import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { build, createConfinedFs, type FsLimits, KustomizeError } from '../src/index.ts';

// Each safety rule of issue #5 has one hostile fixture here. Every case must be refused with a
// KustomizeError that says what went wrong, quickly (the per-test timeout catches a hang).
const timeout = 5_000;
const secret = 'TOP-SECRET-OUTSIDE-THE-ROOT';

describe('hostile kustomizations are refused', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A temp dir holding `outside/` (never readable) and `root/` (the artifact root). */
  const sandbox = (files: Record<string, string>): { root: string; outside: string } => {
    const base = mkdtempSync(join(tmpdir(), 'mooring-hostile-'));
    dirs.push(base);
    const outside = join(base, 'outside');
    const root = join(base, 'root');
    mkdirSync(outside);
    mkdirSync(root);
    writeFileSync(
      join(outside, 'secret.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n  s: ${secret}\n`,
    );
    writeFileSync(join(outside, 'kustomization.yaml'), 'resources: [secret.yaml]\n');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    return { root, outside };
  };

  const refused = async (root: string, pattern: RegExp, limits?: Partial<FsLimits>, path = '.') => {
    const error = await build(createConfinedFs(root, limits), path).then(
      () => assert.fail('the build was expected to fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof KustomizeError, `expected a KustomizeError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, new RegExp(secret));
  };

  it('an absolute resource path', { timeout }, async () => {
    const { root, outside } = sandbox({});
    writeFileSync(join(root, 'kustomization.yaml'), `resources: [${join(outside, 'secret.yaml')}]\n`);
    await refused(root, /absolute path .* is not allowed/);
  });

  it('a ../ resource path that leaves the root', { timeout }, async () => {
    const { root } = sandbox({ 'app/kustomization.yaml': 'resources: [../../outside/secret.yaml]\n' });
    await refused(root, /leaves the root directory/, undefined, 'app');
  });

  it('a ../ base directory that leaves the root', { timeout }, async () => {
    const { root } = sandbox({ 'kustomization.yaml': 'resources: [../outside]\n' });
    await refused(root, /leaves the root directory/);
  });

  it('a symlinked file pointing out of the root', { timeout }, async () => {
    const { root, outside } = sandbox({ 'kustomization.yaml': 'resources: [link.yaml]\n' });
    symlinkSync(join(outside, 'secret.yaml'), join(root, 'link.yaml'));
    await refused(root, /symlink that leaves the root/);
  });

  it('a symlinked directory pointing out of the root', { timeout }, async () => {
    const { root, outside } = sandbox({ 'kustomization.yaml': 'resources: [base]\n' });
    symlinkSync(outside, join(root, 'base'));
    await refused(root, /symlink that leaves the root/);
  });

  it('a symlink that stays inside the root is followed', { timeout }, async () => {
    const { root } = sandbox({
      'kustomization.yaml': 'resources: [link.yaml]\n',
      'real.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inside\n',
    });
    symlinkSync(join(root, 'real.yaml'), join(root, 'link.yaml'));
    const out = await build(createConfinedFs(root), '.');
    assert.equal(out.length, 1);
  });

  it('a remote base URL', { timeout }, async () => {
    for (const url of [
      'https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.8.0',
      'github.com/org/repo/base?ref=main',
      'git@github.com:org/repo.git',
    ]) {
      const { root } = sandbox({ 'kustomization.yaml': `resources: ["${url}"]\n` });
      await refused(root, /remote resources are not supported/);
    }
  });

  it('a huge file', { timeout }, async () => {
    const { root } = sandbox({
      'kustomization.yaml': 'resources: [big.yaml]\n',
      'big.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  x: ${'a'.repeat(64 * 1024)}\n`,
    });
    await refused(root, /over the limit of 32768/, { maxFileBytes: 32 * 1024 });
  });

  it('too many bytes in total', { timeout }, async () => {
    const files: Record<string, string> = { 'kustomization.yaml': 'resources: [a.yaml, b.yaml]\n' };
    for (const n of ['a', 'b']) {
      files[`${n}.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\ndata:\n  x: ${'a'.repeat(20_000)}\n`;
    }
    const { root } = sandbox(files);
    await refused(root, /exceeds the total limit of 30000 bytes/, { maxTotalBytes: 30_000 });
  });

  it('too many files', { timeout }, async () => {
    const files: Record<string, string> = {};
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}.yaml`);
    files['kustomization.yaml'] = `resources: [${names.join(', ')}]\n`;
    for (const [i, name] of names.entries()) {
      files[name] = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n`;
    }
    const { root } = sandbox(files);
    await refused(root, /too many files/, { maxFiles: 10 });
  });

  it('a YAML alias bomb (billion laughs)', { timeout }, async () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      lines.push(
        `${name}: &${name} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`,
      );
    }
    const { root } = sandbox({
      'kustomization.yaml': 'resources: [bomb.yaml]\n',
      'bomb.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  ${lines.join('\n  ')}\n`,
    });
    await refused(root, /too many aliases/);
  });

  it('deeply nested YAML, in flow and in block style', { timeout }, async () => {
    const flow = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    let block = '';
    for (let i = 0; i < 300; i++) block += `${'  '.repeat(i + 1)}k${i}:\n`;
    const { root } = sandbox({
      'flow/kustomization.yaml': 'resources: [deep.yaml]\n',
      'flow/deep.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: ${flow}\n`,
      'block/kustomization.yaml': 'resources: [deep.yaml]\n',
      'block/deep.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nspec:\n${block}  leaf: 1\n`,
    });
    await refused(root, /nested/, undefined, 'flow');
    await refused(root, /nested more than 100 levels/, undefined, 'block');
  });

  it('a kustomization cycle a -> b -> a', { timeout }, async () => {
    const { root } = sandbox({
      'a/kustomization.yaml': 'resources: [../b]\n',
      'b/kustomization.yaml': 'resources: [../a]\n',
    });
    await refused(root, /kustomization cycle detected: a -> b -> a/, undefined, 'a');
  });

  it('a kustomization that includes itself', { timeout }, async () => {
    const { root } = sandbox({ 'app/kustomization.yaml': 'resources: [.]\n' });
    await refused(root, /kustomization cycle detected: app -> app/, undefined, 'app');
  });

  it('a component cycle', { timeout }, async () => {
    const component = (other: string) =>
      `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents: [../${other}]\n`;
    const { root } = sandbox({
      'kustomization.yaml': 'components: [c1]\n',
      'c1/kustomization.yaml': component('c2'),
      'c2/kustomization.yaml': component('c1'),
    });
    await refused(root, /kustomization cycle detected: c1 -> c2 -> c1/);
  });

  it('a generator reading /etc/passwd by absolute path', { timeout }, async () => {
    const { root } = sandbox({
      'kustomization.yaml': 'configMapGenerator:\n- name: x\n  files: [/etc/passwd]\n',
    });
    await refused(root, /absolute path/);
  });

  it('a generator reading /etc/passwd through ../', { timeout }, async () => {
    const { root } = sandbox({
      'app/kustomization.yaml':
        'configMapGenerator:\n- name: x\n  files: [passwd=../../../../../../../../etc/passwd]\n',
    });
    await refused(root, /leaves the root directory/, undefined, 'app');
  });

  it('a secret generator reading an env file outside the root', { timeout }, async () => {
    const { root } = sandbox({
      'kustomization.yaml': 'secretGenerator:\n- name: x\n  envs: [../outside/secret.yaml]\n',
    });
    await refused(root, /leaves the root directory/);
  });

  it('a patch file outside the root', { timeout }, async () => {
    const { root } = sandbox({ 'kustomization.yaml': 'patches:\n- path: ../outside/secret.yaml\n' });
    await refused(root, /leaves the root directory/);
  });

  it('Helm charts and plugins', { timeout }, async () => {
    const { root } = sandbox({
      'helm/kustomization.yaml': 'helmCharts:\n- name: x\n  repo: https://example.com\n  releaseName: x\n',
      'helm-escape/kustomization.yaml':
        'helmGlobals:\n  chartHome: ../../outside\nhelmCharts:\n- name: x\n  releaseName: x\n',
      'plugin/kustomization.yaml': 'generators: [gen.yaml]\n',
      'plugin/gen.yaml': 'apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata:\n  name: x\n',
      'fn/kustomization.yaml':
        'transformers:\n- |-\n  apiVersion: example.com/v1\n  kind: Fn\n  metadata:\n    name: x\n    annotations:\n      config.kubernetes.io/function: |\n        exec: {path: /bin/sh}\n',
      'missing/kustomization.yaml': 'generators: [gen.yaml]\n',
      'escape/kustomization.yaml': 'transformers: [../../outside/secret.yaml]\n',
      'helm-gen/kustomization.yaml':
        'generators:\n- |-\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n  metadata:\n    name: x\n',
    });
    // Without a renderer (kustomize without --enable-helm) charts are refused; with one, a remote repo
    // is never fetched and a chartHome out of the root is never read.
    await refused(root, /helmCharts need a Helm renderer/, undefined, 'helm');
    const renderer = async (): Promise<string> => assert.fail('the renderer must not be called');
    await assert.rejects(
      build(createConfinedFs(root), 'helm', { helm: renderer }),
      /not in chartHome .*renders without network: vendor the chart there .* or render it from a HelmChart source/,
    );
    await assert.rejects(
      build(createConfinedFs(root), 'helm-escape', { helm: renderer }),
      /leaves the root directory/,
    );
    // Only builtin generators and transformers run: exec and Go plugins and KRM functions are refused.
    await refused(
      root,
      /external plugins disabled; unable to load external plugin 'ChartInflator'/,
      undefined,
      'plugin',
    );
    await refused(root, /external plugins disabled; unable to load external plugin 'Fn'/, undefined, 'fn');
    await refused(root, /does not exist/, undefined, 'missing');
    await refused(root, /leaves the root directory|outside/, undefined, 'escape');
    await refused(root, /unable to load builtin/, undefined, 'helm-gen');
  });

  it('a configurations file outside the root', { timeout }, async () => {
    const { root } = sandbox({ 'kustomization.yaml': 'configurations:\n- ../outside/secret.yaml\n' });
    await refused(root, /leaves the root directory/);
  });

  it('vars that repeat a large value until the build is huge', { timeout }, async () => {
    const big = 'x'.repeat(1024 * 1024);
    const refs = '$(BIG)'.repeat(100);
    const { root } = sandbox({
      'kustomization.yaml':
        'resources: [r.yaml]\nvars:\n- name: BIG\n  objref: {apiVersion: v1, kind: ConfigMap, name: big}\n  fieldref: {fieldPath: data.v}\n',
      'r.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  annotations:\n${Array.from(
        { length: 10 },
        (_, i) => `    a${i}: ${refs}\n`,
      ).join('')}data:\n  v: ${big}\n`,
    });
    await refused(root, /vars expand the build by more than 67108864 characters/);
  });

  it('kustomizations nested deeper than the limit', { timeout }, async () => {
    const files: Record<string, string> = {};
    let dir = 'l0';
    for (let i = 0; i < 40; i++) {
      files[`${dir}/kustomization.yaml`] = 'resources: [next]\n';
      dir = `${dir}/next`;
    }
    files[`${dir}/kustomization.yaml`] = 'resources: []\nnamespace: x\n';
    const { root } = sandbox(files);
    await refused(root, /nest more than 32 levels/, undefined, 'l0');
  });
});
