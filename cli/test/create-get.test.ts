import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

test('create --export prints YAML for every kind that the API server accepts (dry-run)', async (t) => {
  const ns = await testNamespace(t, 'cli-export');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const commands = [
    ['create', 'source', 'git', 'app', '--url', 'https://example.com/app.git', '--tag', 'v1.0.0'],
    ['create', 'source', 'oci', 'app', '--url', 'oci://ghcr.io/org/app', '--tag-semver', '>=1.0.0'],
    [
      'create',
      'kustomization',
      'app',
      '--source',
      'GitRepository/app',
      '--path',
      './deploy',
      '--prune',
      '--target-namespace',
      'prod',
      '--depends-on',
      'infra',
      '--substitute',
      'cluster=prod',
    ],
    [
      'create',
      'receiver',
      'hook',
      '--type',
      'github',
      '--event',
      'push',
      '--resource',
      'GitRepository/app',
      '--secret-ref',
      'hook-token',
    ],
    ['create', 'provider', 'chat', '--type', 'generic', '--address', 'https://example.com/hook'],
    [
      'create',
      'alert',
      'on-errors',
      '--provider-ref',
      'chat',
      '--event-source',
      'Kustomization/*',
      '--event-severity',
      'error',
    ],
    ['create', 'image', 'repository', 'app', '--image', 'ghcr.io/org/app'],
    ['create', 'image', 'policy', 'app', '--image-ref', 'app', '--select-semver', '>=1.0.0'],
    [
      'create',
      'image',
      'update',
      'app',
      '--git-repo-ref',
      'app',
      '--author-email',
      'bot@example.com',
      '--push-branch',
      'auto',
    ],
    ['create', 'secret', 'git', 'creds', '--username', 'git', '--password', 'hunter2'],
    ['create', 'secret', 'oci', 'pull', '--url', 'ghcr.io', '--username', 'u', '--password', 'p'],
    ['create', 'source', 'helm', 'charts', '--url', 'https://charts.example.com', '--secret-ref', 'creds'],
    ['create', 'source', 'helm', 'oci-charts', '--url', 'oci://ghcr.io/org/charts'],
    [
      'create',
      'source',
      'chart',
      'app',
      '--source',
      'helmrepository/charts',
      '--chart',
      'app',
      '--chart-version',
      '>=1.0.0 <2.0.0',
      '--values',
      'values.yaml',
      '--values',
      'values-prod.yaml',
    ],
  ];
  const results = await Promise.all(
    commands.map((args) => mooring([...args, '-n', ns, '--export'], { env })),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 0, `${commands[i]!.join(' ')}: ${r.stderr}`);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
    assert.equal(docs.length, 1);
    const obj = docs[0]!;
    assert.equal(obj.metadata.namespace, ns);
    // The server validates against the CRD schema (and CEL rules) without storing anything.
    await client.apply(obj, { fieldManager: 'mooring-cli-test', dryRun: true });
  }
  const [git, , ks] = results.map((r) => parseAllDocuments(r.stdout)[0]!.toJS());
  assert.deepEqual(git.spec, { url: 'https://example.com/app.git', interval: '1m', ref: { tag: 'v1.0.0' } });
  assert.deepEqual(ks.spec.dependsOn, [{ name: 'infra' }]);
  assert.deepEqual(ks.spec.postBuild, { substitute: { cluster: 'prod' } });
  const [helm, ociHelm, chart] = results.slice(-3).map((r) => parseAllDocuments(r.stdout)[0]!.toJS());
  assert.deepEqual(helm.spec, {
    url: 'https://charts.example.com',
    interval: '1m',
    secretRef: { name: 'creds' },
  });
  assert.equal(ociHelm.spec.type, 'oci');
  assert.deepEqual(chart.spec, {
    chart: 'app',
    version: '>=1.0.0 <2.0.0',
    sourceRef: { kind: 'HelmRepository', name: 'charts' },
    interval: '1m',
    valuesFiles: ['values.yaml', 'values-prod.yaml'],
  });
  // --export never applied anything.
  const { items } = await client.list('source.mooring.dev/v1', 'GitRepository', { namespace: ns });
  assert.equal(items.length, 0);
});

test('create applies; get, suspend, resume, export and delete work on the object', async (t) => {
  const ns = await testNamespace(t, 'cli-lifecycle');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const created = await mooring(
    ['create', 'source', 'git', 'app', '--url', 'https://example.com/app.git', '-n', ns],
    { env },
  );
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stdout, `✔ GitRepository ${ns}/app applied\n`);
  const live = await client.get({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    namespace: ns,
    name: 'app',
  });
  assert.equal((live.metadata.managedFields as { manager: string }[])[0]?.manager, 'mooring-cli');

  const suspended = await mooring(['suspend', 'source', 'git', 'app', '-n', ns], { env });
  assert.equal(suspended.code, 0, suspended.stderr);
  const [get, getAll, missing] = await Promise.all([
    mooring(['get', 'sources', '-n', ns], { env }),
    mooring(['get', 'all', '-A'], { env }),
    mooring(['get', 'ks', '-n', ns], { env }),
  ]);
  assert.equal(get.code, 0, get.stderr);
  const [header, row] = get.stdout.trimEnd().split('\n');
  assert.match(header!, /^NAME\s+REVISION\s+SUSPENDED\s+READY\s+MESSAGE$/);
  assert.match(row!, /^gitrepository\/app\s+True\s+Unknown$/);
  assert.match(getAll.stdout, new RegExp(`^${ns}\\s+gitrepository/app\\s+True`, 'm'));
  const helmCreated = await mooring(
    ['create', 'source', 'helm', 'charts', '--url', 'oci://ghcr.io/org/charts', '-n', ns],
    { env },
  );
  assert.equal(helmCreated.code, 0, helmCreated.stderr);
  const [helmRows, chartRows] = await Promise.all([
    mooring(['get', 'sources', 'helm', '-n', ns], { env }),
    mooring(['get', 'sources', 'chart', '-n', ns], { env }),
  ]);
  assert.equal(helmRows.code, 0, helmRows.stderr);
  assert.match(helmRows.stdout, /^charts\s+False\s/m);
  assert.doesNotMatch(helmRows.stdout, /\bapp\b/);
  assert.equal(chartRows.code, 0, chartRows.stderr);
  assert.equal(chartRows.stderr, `no objects found in namespace ${ns}\n`);
  assert.equal(missing.code, 0);
  assert.equal(missing.stderr, `no objects found in namespace ${ns}\n`);

  const [exported, resumed] = await Promise.all([
    mooring(['export', 'source', 'git', 'app', '-n', ns], { env }),
    mooring(['resume', 'source', 'git', 'app', '-n', ns, '--no-wait'], { env }),
  ]);
  assert.equal(exported.code, 0, exported.stderr);
  const doc = parseAllDocuments(exported.stdout)[0]!.toJS() as KubeObject;
  assert.deepEqual(Object.keys(doc), ['apiVersion', 'kind', 'metadata', 'spec']);
  assert.deepEqual(doc.metadata, { name: 'app', namespace: ns });
  assert.equal(resumed.code, 0, resumed.stderr);
  const after = await client.get({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    namespace: ns,
    name: 'app',
  });
  assert.equal((after.spec as { suspend?: boolean }).suspend, undefined);

  // Without a terminal, delete refuses to guess: --yes is required.
  const refused = await mooring(['delete', 'source', 'git', 'app', '-n', ns], { env });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refusing without confirmation, pass --yes\./);
  const deleted = await mooring(['delete', 'source', 'git', 'app', '-n', ns, '--yes'], { env });
  assert.equal(deleted.code, 0, deleted.stderr);
  const gone = await client.getOrUndefined({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    namespace: ns,
    name: 'app',
  });
  assert.ok(!gone || gone.metadata.deletionTimestamp);
  const again = await mooring(['delete', 'source', 'git', 'nothing', '-n', ns, '--yes'], { env });
  assert.equal(again.code, 1);
  assert.match(
    again.stderr,
    new RegExp(
      `GitRepository ${ns}/nothing not found: list them with 'mooring get gitrepositories -n ${ns}'\\.`,
    ),
  );
});

test('get --watch prints a row when an object changes', async (t) => {
  const ns = await testNamespace(t, 'cli-watch');
  const { client, kubeconfig } = await testCluster();
  const { spawn } = await import('node:child_process');
  const { CLI_MAIN } = await import('./run-cli.ts');
  const child = spawn(process.execPath, [CLI_MAIN, 'get', 'ks', '-n', ns, '--watch'], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
  });
  t.after(() => child.kill());
  let out = '';
  const seen = (re: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${re} in: ${out}`)), 60_000);
      const check = (): void => {
        if (re.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        check();
      });
      check();
    });
  await seen(/NAME\s+REVISION/);
  await client.create({
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    metadata: { name: 'late', namespace: ns },
    spec: { sourceRef: { kind: 'GitRepository', name: 'app' }, interval: '10m', prune: true, suspend: true },
  });
  await seen(/^late\s+True\s+Unknown/m);
});

test('get of a named object that does not exist exits 1 with one line; an empty list still exits 0', async (t) => {
  const ns = await testNamespace(t, 'cli-get-missing');
  const { kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const [named, inGroup, everywhere, empty] = await Promise.all([
    mooring(['get', 'ks', 'nope', '-n', ns], { env }),
    mooring(['get', 'sources', 'nope', '-n', ns], { env }),
    mooring(['get', 'ks', 'nope', '-A'], { env }),
    mooring(['get', 'ks', '-n', ns], { env }),
  ]);
  assert.equal(named.code, 1);
  assert.equal(named.stdout, '');
  assert.equal(
    named.stderr,
    `✗ Kustomization nope not found in namespace ${ns}: list them with 'mooring get kustomizations -n ${ns}'.\n`,
  );
  assert.equal(inGroup.code, 1);
  assert.match(
    inGroup.stderr,
    /^✗ GitRepository or OCIRepository or HelmRepository or HelmChart nope not found in namespace [^\n]*\n$/,
  );
  assert.equal(everywhere.code, 1);
  assert.match(everywhere.stderr, /^✗ Kustomization nope not found in any namespace: [^\n]* -A'\.\n$/);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stderr, `no objects found in namespace ${ns}\n`);
});

test('export into a pipe the reader closed (`| head`) ends quietly with 141, no stack trace', async (t) => {
  const ns = await testNamespace(t, 'cli-export-pipe');
  const { client, kubeconfig } = await testCluster();
  // One object larger than a pipe holds (64 KiB), so the write cannot finish before the reader is gone.
  await client.create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: 'big', namespace: ns },
    spec: {
      url: 'https://example.com/big.git',
      interval: '1h',
      suspend: true,
      ignore: Array.from({ length: 8000 }, (_, i) => `/generated/file-${i}.json`).join('\n'),
    },
  });
  const r = await mooring(['export', 'source', 'git', '-n', ns], {
    env: { KUBECONFIG: kubeconfig },
    closeStdout: true,
  });
  assert.equal(r.stderr, '');
  assert.equal(r.code, 141);
});

test('create kustomization --source takes kinds in any case and a bare name as GitRepository; an unknown kind is refused before anything is sent', async () => {
  const refs = async (source: string): Promise<unknown> => {
    const r = await mooring(['create', 'ks', 'app', '--source', source, '-n', 'team', '--export']);
    assert.equal(r.code, 0, `${source}: ${r.stderr}`);
    return (parseAllDocuments(r.stdout)[0]!.toJS() as { spec: { sourceRef: unknown } }).spec.sourceRef;
  };
  assert.deepEqual(await refs('Gitrepo/x'), { kind: 'GitRepository', name: 'x' });
  assert.deepEqual(await refs('gitrepository/x'), { kind: 'GitRepository', name: 'x' });
  assert.deepEqual(await refs('OCIREPOSITORY/infra/x'), {
    kind: 'OCIRepository',
    namespace: 'infra',
    name: 'x',
  });
  assert.deepEqual(await refs('x'), { kind: 'GitRepository', name: 'x' });
  // No kubeconfig can be read, so an error about the kind shows nothing was sent first.
  const bad = await mooring(['create', 'ks', 'app', '--source', 'Bucket/x'], {
    env: { KUBECONFIG: '/nonexistent/kubeconfig' },
  });
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    "✗ --source kind 'Bucket' is not a source a Kustomization can read: use GitRepository or OCIRepository, e.g. --source GitRepository/x.\n",
  );
});
