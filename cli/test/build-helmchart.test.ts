// `mooring build helmchart` against `helm template` (bin/helm v3.22.0): the same bytes on stdout for
// directories and packaged charts, Helm's own message on a refusal, exit 2 on a usage error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { writeChartLinkingBeside } from '../../shared/helm/test/linked-chart.ts';
import { mooring } from './run-cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HELM = join(ROOT, 'bin/helm');
const TESTDATA = join(ROOT, 'shared/helm/test/testdata');
const FEATURES = join(TESTDATA, 'features');
const SUBCHART = join(TESTDATA, 'helm-testcharts/subchart');
const LIB_DEP = join(TESTDATA, 'helm-testcharts/chart-with-lib-dep');

// A skipped fidelity test would prove nothing: without the binaries the file fails at once.
for (const file of [HELM, join(ROOT, 'bin/mooring-helm.wasm')]) {
  if (!existsSync(file))
    throw new Error(`${file} is missing: run bash hack/lib/build-helm.sh (npm test builds it)`);
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let work: string;

/** bin/helm with a private HOME and nothing else in its environment. */
function helm(args: string[]): Promise<Result> {
  return new Promise((done) => {
    execFile(
      HELM,
      args,
      { env: { HOME: work, PATH: '/usr/bin:/bin' }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('mooring build helmchart prints what helm template prints', () => {
  let valuesA: string;
  let valuesB: string;
  let tgz: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'mooring-build-helmchart-'));
    valuesA = join(work, 'a.yaml');
    valuesB = join(work, 'b.yaml');
    writeFileSync(valuesA, 'replicas: 3\nimage:\n  tag: "1.27"\nenv:\n  - name: A\n    value: "1"\n');
    writeFileSync(valuesB, 'global:\n  team: web\nreplicas: 4\n');
    const packaged = await helm(['package', FEATURES, '--destination', work]);
    assert.equal(packaged.code, 0, packaged.stderr);
    const file = readdirSync(work).find((f) => f.endsWith('.tgz'));
    assert.ok(file, 'helm package wrote no .tgz');
    tgz = join(work, file);
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('byte for byte, with values files in order (one on stdin), --set, --set-string, --set-json, and the defaults', async () => {
    const featuresFlags = [
      '--namespace',
      'apps',
      '-f',
      valuesA,
      '--values',
      valuesB,
      '--set',
      'child.port=9090',
      '--set',
      'list={z,y}',
      '--set-string',
      'must=007',
      '--set-json',
      'image={"repository":"busybox","tag":"1.36"}',
      '--api-versions',
      'example.com/v1',
    ];
    const subchartFlags = [
      '-f',
      join(SUBCHART, 'extra_values.yaml'),
      '--set',
      'tags.front-end=false',
      '--set',
      'subchartb.enabled=true',
      '--include-crds',
      '--kube-version',
      '1.30.2',
    ];
    const cases = [
      {
        name: 'features',
        helm: ['template', 'demo', FEATURES, ...featuresFlags],
        ours: [
          'build',
          'helmchart',
          FEATURES,
          '--name',
          'demo',
          ...featuresFlags.map((f) => (f === valuesB ? '-' : f)),
        ],
        input: 'global:\n  team: web\nreplicas: 4\n',
      },
      {
        name: 'subchart',
        helm: ['template', 'subs', SUBCHART, ...subchartFlags],
        ours: ['build', 'helmchart', SUBCHART, '--name', 'subs', ...subchartFlags],
      },
      // No --name and no --namespace: helm's release-name in namespace default.
      {
        name: 'chart-with-lib-dep, defaults',
        helm: ['template', LIB_DEP],
        ours: ['build', 'helmchart', LIB_DEP],
      },
    ];
    const results = await Promise.all(
      cases.map(async (c) => ({
        name: c.name,
        expected: await helm(c.helm),
        r: await mooring(c.ours, { input: c.input }),
      })),
    );
    for (const { name, expected, r } of results) {
      assert.equal(expected.code, 0, `${name}: helm template failed: ${expected.stderr}`);
      assert.ok(expected.stdout.length > 0);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.equal(r.stdout, expected.stdout, `${name} differs from helm template's output`);
    }
    assert.match(results[2]!.expected.stdout, /release-name/);
  });

  it('a packaged chart (.tgz, from helm package) renders as its directory; --version is checked', async () => {
    const flags = ['--namespace', 'apps', '--set', 'child.enabled=false', '--skip-tests'];
    const [fromDir, fromTgz] = await Promise.all([
      helm(['template', 'pkg', FEATURES, ...flags]),
      mooring(['build', 'helmchart', tgz, '--name', 'pkg', '--version', '1.2.3', ...flags]),
    ]);
    assert.equal(fromDir.code, 0, fromDir.stderr);
    assert.equal(fromTgz.code, 0, fromTgz.stderr);
    assert.equal(fromTgz.stdout, fromDir.stdout);

    const wrong = await mooring(['build', 'helmchart', tgz, '--version', '2.0.0']);
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, `✗ ${tgz} holds chart version 1.2.3, not --version 2.0.0.\n`);
    assert.equal(wrong.stdout, '');
  });

  it('a link elsewhere in the Git work tree is followed, as helm does; one out of it is refused', async () => {
    const tree = join(work, 'linked-tree');
    mkdirSync(join(tree, '.git'), { recursive: true });
    const chart = writeChartLinkingBeside(tree);
    const [expected, r] = await Promise.all([
      helm(['template', chart, '--include-crds']),
      mooring(['build', 'helmchart', chart, '--include-crds']),
    ]);
    assert.equal(expected.code, 0, expected.stderr);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /name: widgets.example.com/);
    assert.equal(r.stdout, expected.stdout);

    symlinkSync('/etc/passwd', join(chart, 'passwd'));
    const out = await mooring(['build', 'helmchart', chart]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /chart file passwd is a link that leads out of the tree the chart is in/);
    assert.doesNotMatch(out.stdout + out.stderr, /root:/);
  });

  it("a template error exits 1 with Helm's message in one line", async () => {
    const [expected, r] = await Promise.all([
      helm(['template', FEATURES, '--set', 'must=null']),
      mooring(['build', 'helmchart', FEATURES, '--set', 'must=null']),
    ]);
    assert.notEqual(expected.code, 0);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const message = /^Error: (.*)$/m.exec(expected.stderr)?.[1];
    assert.ok(message, expected.stderr);
    assert.match(message, /must is required/);
    assert.equal(r.stderr, `✗ helm template of ${FEATURES} failed: ${message}\n`);
  });

  it("a values.schema.json violation exits 1 with Helm's whole message, kept over its lines", async () => {
    const chart = join(TESTDATA, 'helm-testcharts/chart-with-schema');
    const values = join(chart, 'extra-values.yaml');
    const [expected, r] = await Promise.all([
      helm(['template', chart, '-f', values]),
      mooring(['build', 'helmchart', chart, '-f', values]),
    ]);
    assert.notEqual(expected.code, 0);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const prefix = `✗ helm template of ${chart} failed: `;
    assert.ok(r.stderr.startsWith(prefix), r.stderr);
    const message = r.stderr.slice(prefix.length).replace(/\n$/, '');
    assert.match(message, /^values don't meet the specifications of the schema/);
    assert.match(message, /minimum: got -5, want 0/);
    assert.ok(expected.stderr.startsWith(`Error: ${message}`), expected.stderr);
  });
});

/** A gzipped ustar archive of regular files, names as given (no checks: the point is hostile names). */
function tarGz(files: Record<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of Object.entries(files)) {
    const body = Buffer.from(text);
    const header = Buffer.alloc(512);
    header.write(name, 0, 100);
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

describe('mooring build helmchart refuses a file that is no packaged chart, exit 1', () => {
  it('an entry that climbs out, two top-level entries, a file that is not gzip', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mooring-build-helmchart-bad-'));
    try {
      mkdirSync(join(dir, 'in'));
      const chart = 'apiVersion: v2\nname: c\nversion: 0.1.0\n';
      const climbs = join(dir, 'in/climbs.tgz');
      writeFileSync(climbs, tarGz({ 'c/Chart.yaml': chart, '../outside.yaml': 'x: 1\n' }));
      const two = join(dir, 'in/two.tgz');
      writeFileSync(two, tarGz({ 'a/Chart.yaml': chart, 'b/Chart.yaml': chart }));
      const plain = join(dir, 'in/plain.tgz');
      writeFileSync(plain, 'apiVersion: v2\n');
      const [r1, r2, r3] = await Promise.all([
        mooring(['build', 'helmchart', climbs]),
        mooring(['build', 'helmchart', two]),
        mooring(['build', 'helmchart', plain]),
      ]);
      for (const r of [r1, r2, r3]) {
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stdout, '');
      }
      assert.match(r1.stderr, /^✗ .*climbs\.tgz is not a packaged chart \(\.tgz\): .*\.\./);
      assert.ok(!existsSync(join(dir, 'outside.yaml')));
      assert.match(
        r2.stderr,
        /^✗ .*two\.tgz is not a packaged chart: it should hold one folder with the chart, it holds a, b\.\n$/,
      );
      assert.match(r3.stderr, /^✗ .*plain\.tgz is not a packaged chart \(\.tgz\): /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mooring build helmchart usage errors exit 2', () => {
  it('an unknown flag', async () => {
    const r = await mooring(['build', 'helmchart', FEATURES, '--no-such-flag']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option '--no-such-flag'/);
    assert.equal(r.stdout, '');
  });

  it('a repo/chart reference, which needs the cluster', async () => {
    const r = await mooring(['build', 'helmchart', 'bitnami/nginx', '--version', '1.0.0']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^✗ bitnami\/nginx is not a local chart: .*pass a chart directory or a packaged \.tgz/,
    );
  });

  it('a missing chart, a missing values file, --version on a directory', async () => {
    const missing = await mooring(['build', 'helmchart', join(tmpdir(), 'no-such-chart-here')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /does not exist: pass a chart directory or a packaged \.tgz/);
    const values = await mooring([
      'build',
      'helmchart',
      FEATURES,
      '-f',
      join(tmpdir(), 'no-such-values.yaml'),
    ]);
    assert.equal(values.code, 2);
    assert.match(values.stderr, /^✗ cannot read values file .*no-such-values\.yaml: ENOENT/);
    const version = await mooring(['build', 'helmchart', FEATURES, '--version', '1.2.3']);
    assert.equal(version.code, 2);
    assert.match(version.stderr, /--version 1\.2\.3 applies to a packaged chart \(\.tgz\)/);
  });
});
