import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mooring } from './run-cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test/conformance/kustomize');

// Fixtures with bases in sibling folders, generators, patches and components: the output must be
// exactly what Go kustomize wrote when the fixture was recorded.
const SAMPLE = [
  'combo-images-and-patch-add-container',
  'combo-diamond-bases-with-prefixes',
  'combo-generator-hash-changes-after-merge-and-nameref',
  'build-metadata-origin-annotations',
  // What issue 15 added to the engine, through the CLI: vars, configurations:, builtin
  // generator/transformer configs, crds:, regex replacement targets, a Component built directly.
  'vars-service-name-after-overlay-prefix',
  'vars-from-generated-configmap-merged-in-overlay',
  'configurations-crd-namereference-generated-configmap',
  'configurations-component-and-overlay',
  'plugins-builtin-generators-configured',
  'plugins-builtin-transformers-configured',
  'crds-field-name-references',
  'replacements-target-select-reject-regex',
  'components-built-directly',
];

test('build <dir> prints exactly what kustomize build prints on conformance fixtures', async () => {
  const results = await Promise.all(
    SAMPLE.map(async (name) => {
      const dir = join(FIXTURES, name);
      const entryFile = join(dir, 'entry.txt');
      const entry = existsSync(entryFile) ? readFileSync(entryFile, 'utf8').trim() || '.' : '.';
      return {
        name,
        expected: readFileSync(join(dir, 'expected.yaml'), 'utf8'),
        r: await mooring(['build', join(dir, 'input', entry)]),
      };
    }),
  );
  for (const { name, expected, r } of results) {
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, expected, `${name} differs from kustomize's output`);
  }
});

test('build of config/ matches the Go kustomize binary byte for byte, past the 64 KiB pipe buffer', async () => {
  const { stdout: expected } = await promisify(execFile)(
    join(ROOT, 'bin/kustomize'),
    ['build', join(ROOT, 'config')],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  assert.ok(expected.length > 65_536);
  const r = await mooring(['build'], { cwd: join(ROOT, 'config') });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.length, expected.length);
  assert.equal(r.stdout, expected);
});

test('build refuses an external plugin with the reason kustomize gives, exit 1', async () => {
  const r = await mooring(['build', join(FIXTURES, 'plugins-external-plugin-refused', 'input')]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, /external plugins disabled/);
  assert.equal(r.stdout, '');
});

test('build of a broken kustomization fails in one sentence, exit 1', async () => {
  const r = await mooring(['build', join(ROOT, 'cli')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^✗ kustomize build of .* failed: /);
  assert.equal(r.stdout, '');
});

test('a build error names files from where the command ran, not from the top folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mooring-build-paths-'));
  try {
    mkdirSync(join(dir, 'site', 'app'), { recursive: true });
    writeFileSync(join(dir, 'site/app/kustomization.yaml'), 'resources:\n- a.yaml\n');
    writeFileSync(
      join(dir, 'site/app/a.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: 1\n',
    );
    const inside = await mooring(['build', '.'], { cwd: join(dir, 'site/app') });
    assert.equal(inside.code, 1);
    assert.match(inside.stderr, /failed: a\.yaml: invalid YAML at line 5, column 1/);
    const above = await mooring(['build', 'app'], { cwd: join(dir, 'site') });
    assert.match(above.stderr, /failed: app\/a\.yaml: invalid YAML/);
    // A path that does not exist (a chart the kustomization names) is named from here too.
    writeFileSync(
      join(dir, 'site/app/kustomization.yaml'),
      'helmCharts:\n- name: absent\n  releaseName: r\n',
    );
    const missing = await mooring(['build', 'app'], { cwd: join(dir, 'site') });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no chart found at app\/charts\/absent\n/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
