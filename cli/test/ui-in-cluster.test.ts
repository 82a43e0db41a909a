// The in-cluster UI (config/ui) on the real control plane. No kubelet runs, so the server runs as
// a local process with what a pod would have: the token the API server issued to its
// ServiceAccount, bound to config/ui's own ClusterRoles. Users sign in with their tokens
// (TokenReview) or come through an authenticating proxy; actions and diffs impersonate them, so RBAC
// decides.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { HELM_API_VERSION, KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { eventually, GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import type { ObjectDiff } from '../src/live-diff.ts';
import { startGitOpsOperators } from './gitops-operators.ts';
import { CLI_MAIN, mooring } from './run-cli.ts';
import { call, type Reply } from './ui-http.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const KUSTOMIZE = join(ROOT, 'bin/kustomize');
const CONFIG_UI = join(ROOT, 'config/ui');

const docsOf = (yaml: string) =>
  parseAllDocuments(yaml)
    .map((d) => d.toJSON() as KubeObject)
    .filter(Boolean);

async function tokenFor(client: KubeClient, namespace: string, sa: string): Promise<string> {
  const reply = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return reply.status.token;
}

const role = (name: string, verbs: string[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name },
  rules: [{ apiGroups: ['kustomize.mooring.dev'], resources: ['kustomizations'], verbs }],
});
const binding = (
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  name: string,
  roleKind: string,
  roleName: string,
  subject: object,
) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects: [subject],
});

interface World {
  ns: string;
  client: KubeClient;
  kubeconfig: string;
  tokens: { viewer: string; editor: string };
  dir: string;
}

/**
 * A namespace with a Kustomization, config/ui's ClusterRoles bound to a ServiceAccount `ui` there,
 * its kubeconfig (the API server's address and CA, that account's token: what a pod mounts), and
 * two users: `viewer` may only read Kustomizations, `editor` may patch them; as proxy users, `alice`
 * is an editor and `bob` a viewer.
 */
async function world(t: TestContext): Promise<World> {
  const ns = await testNamespace(t, 'ui-in-cluster');
  const { client, kubeconfig: admin } = await testCluster();
  const rendered = docsOf((await run(KUSTOMIZE, ['build', CONFIG_UI])).stdout);
  for (const cr of rendered.filter((o) => o.kind === 'ClusterRole'))
    await client.apply(cr, { fieldManager: 'ui-in-cluster-test', force: true });
  const sa = (name: string) =>
    client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
  await Promise.all(['ui', 'viewer', 'editor'].map(sa));
  const create = (o: object) =>
    client.create({ ...(o as KubeObject), metadata: { ...(o as KubeObject).metadata, namespace: ns } });
  const uiSubject = { kind: 'ServiceAccount', name: 'ui', namespace: ns };
  for (const name of ['mooring-ui-read', 'mooring-ui-act-as-user']) {
    const crb = binding('ClusterRoleBinding', `${ns}-${name}`, 'ClusterRole', name, uiSubject);
    await client.create(crb as unknown as KubeObject);
    t.after(() =>
      client.delete({ apiVersion: crb.apiVersion, kind: crb.kind, name: crb.metadata.name }).catch(() => {}),
    );
  }
  await create(role('view-kustomizations', ['get', 'list', 'watch']));
  await create(role('edit-kustomizations', ['get', 'list', 'watch', 'patch']));
  const sub = (name: string) => ({ kind: 'ServiceAccount', name, namespace: ns });
  const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
  await create(binding('RoleBinding', 'viewer', 'Role', 'view-kustomizations', sub('viewer')));
  await create(binding('RoleBinding', 'editor', 'Role', 'edit-kustomizations', sub('editor')));
  await create(binding('RoleBinding', 'alice', 'Role', 'edit-kustomizations', user('alice')));
  await create(binding('RoleBinding', 'bob', 'Role', 'view-kustomizations', user('bob')));
  await create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'apps' },
    spec: {
      interval: '1h',
      path: './apps',
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'platform' },
    },
  });

  const adminConfig = parseYaml(await readFile(admin, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  const dir = await mkdtemp(join(tmpdir(), 'mooring-ui-in-cluster-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: adminConfig.clusters[0]!.cluster }],
      users: [{ name: 'ui', user: { token: await tokenFor(client, ns, 'ui') } }],
      contexts: [{ name: 'ui', context: { cluster: 'c', user: 'ui', namespace: ns } }],
      'current-context': 'ui',
    }),
  );
  return {
    ns,
    client,
    kubeconfig,
    dir,
    tokens: { viewer: await tokenFor(client, ns, 'viewer'), editor: await tokenFor(client, ns, 'editor') },
  };
}

// The operator image's /app, bundled once for this file: the UI runs from it as the image runs it.
// Removed when the file ends: an after() registered inside the first test that bundles would run
// when that test ends, and the later tests would find no bundle.
let app: Promise<string> | undefined;
let appTmp: string | undefined;
after(() => (appTmp ? rm(appTmp, { recursive: true, force: true }) : undefined));
const bundledApp = () => {
  app ??= mkdtemp(join(tmpdir(), 'mooring-ui-app-')).then(async (dir) => {
    appTmp = dir;
    const { bundleOperators } = await import('../../hack/lib/bundle-operators.ts');
    return (await bundleOperators(join(dir, 'app'))).appDir;
  });
  return app;
};

/**
 * The in-cluster UI as its own process, on plain Node from the image's bundle (`from: 'image'`,
 * config/ui's command) or as `mooring ui --in-cluster`; its port, and what it printed so far.
 */
async function startServer(
  t: TestContext,
  w: World,
  args: string[],
  from: 'image' | 'cli',
): Promise<{ port: number; output: () => string }> {
  const dir = from === 'image' ? await bundledApp() : undefined;
  const command = dir
    ? [join(dir, 'dist/ui.mjs'), '--listen', '127.0.0.1:0', '-n', w.ns, ...args]
    : [CLI_MAIN, 'ui', '--in-cluster', '--listen', '127.0.0.1:0', '-n', w.ns, ...args];
  const child: ChildProcess = spawn(process.execPath, command, {
    env: {
      ...process.env,
      KUBECONFIG: w.kubeconfig,
      // What the image sets: the prebuilt page, and the Helm renderer the diff's render loads.
      ...(dir
        ? {
            MOORING_UI_PAGE_DIR: join(dir, 'dist/ui-page'),
            MOORING_HELM_WASM: join(ROOT, 'bin/mooring-helm.wasm'),
          }
        : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  t.after(() => {
    child.kill('SIGTERM');
  });
  const port = await eventually(
    'the in-cluster UI listening',
    async () => {
      if (child.exitCode !== null) throw new Error(`mooring ui exited: ${out}`);
      const m = /serving http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      return m ? Number(m[1]) : undefined;
    },
    60_000,
  );
  return { port, output: () => out };
}

const action = (name: string) =>
  JSON.stringify({ action: 'reconcile', kind: 'Kustomization', namespace: '', name });

test('config/ui renders the same with kustomize and mooring build: the UI from the operator image, RBAC that only reads and impersonates', async () => {
  const [byKustomize, byMooring] = await Promise.all([
    run(KUSTOMIZE, ['build', CONFIG_UI]).then((r) => docsOf(r.stdout)),
    mooring(['build', CONFIG_UI]).then((r) => {
      assert.equal(r.code, 0, r.stderr);
      return docsOf(r.stdout);
    }),
  ]);
  const ids = (docs: KubeObject[]) =>
    docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`).sort();
  assert.deepEqual(ids(byMooring), ids(byKustomize));
  const deployment = byKustomize.find((d) => d.kind === 'Deployment') as KubeObject & {
    spec: {
      template: {
        spec: {
          serviceAccountName: string;
          containers: { image: string; command: string[]; args: string[] }[];
        };
      };
    };
  };
  const container = deployment.spec.template.spec.containers[0]!;
  assert.equal(container.image, 'ghcr.io/mooring-dev/mooring:v0.1.0');
  assert.deepEqual(container.command.slice(-2), ['node', '/app/dist/ui.mjs']);
  assert.ok(container.args.includes('--auth=token'));
  assert.equal(deployment.spec.template.spec.serviceAccountName, 'mooring-ui');
  // The UI's account writes nothing: every verb it holds is a read, TokenReview or impersonate.
  const verbs = byKustomize
    .filter((d) => d.kind === 'ClusterRole')
    .flatMap((d) => ((d as unknown as { rules: { verbs: string[] }[] }).rules ?? []).flatMap((r) => r.verbs));
  assert.deepEqual([...new Set(verbs)].sort(), ['create', 'get', 'impersonate', 'list', 'watch']);
});

test('in-cluster UI with token sign-in: a viewer sees objects but is refused the reconcile, an editor may; no identity, a forged header or a foreign Origin are refused', async (t) => {
  const w = await world(t);
  const { port, output } = await startServer(t, w, ['--auth', 'token'], 'image');
  const origin = { origin: `http://127.0.0.1:${port}` };

  const anonymous = await call(port, '/api/objects');
  assert.equal(anonymous.status, 401);
  assert.match(JSON.parse(anonymous.body).message, /not signed in/);
  assert.equal((await call(port, '/')).headers.location, '/login');
  assert.match((await call(port, '/login')).body, /Kubernetes token/);
  const forged = await call(port, '/api/objects', {
    headers: { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
  });
  assert.equal(forged.status, 401, 'X-Remote-User means nothing without the proxy mode');
  const bad = await call(port, '/login', {
    method: 'POST',
    headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'token=not-a-token',
  });
  assert.equal(bad.status, 401);

  const signIn = await call(port, '/login', {
    method: 'POST',
    headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: w.tokens.viewer }).toString(),
  });
  assert.equal(signIn.status, 303, signIn.body);
  const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  assert.match(cookie, /^mooring_ui_session=/);
  const viewer = { cookie };
  assert.deepEqual(
    JSON.parse((await call(port, '/api/whoami', { headers: viewer })).body).user,
    `system:serviceaccount:${w.ns}:viewer`,
  );
  const rows = await eventually(
    'the Kustomization listed',
    async () => {
      const page = JSON.parse((await call(port, '/api/objects', { headers: viewer })).body) as {
        rows?: { name: string }[];
      };
      return page.rows?.some((r) => r.name === 'apps') ? page.rows : undefined;
    },
    30_000,
  );
  assert.ok(rows.length >= 1);
  const page = await call(port, '/', { headers: viewer });
  assert.equal(page.status, 200);
  assert.match(page.body, /<script[^>]+src=/, 'the prebuilt page is served');

  const refused = await call(port, '/api/action', {
    method: 'POST',
    headers: { ...viewer, ...origin, 'content-type': 'application/json' },
    body: action('apps').replace('"namespace":""', `"namespace":"${w.ns}"`),
  });
  assert.equal(refused.status, 403, refused.body);
  assert.match(
    JSON.parse(refused.body).message,
    new RegExp(`system:serviceaccount:${w.ns}:viewer.* cannot patch`),
  );

  const crossSite = await call(port, '/api/action', {
    method: 'POST',
    headers: { ...viewer, origin: 'http://evil.example', 'content-type': 'application/json' },
    body: action('apps'),
  });
  assert.equal(crossSite.status, 403);
  assert.match(crossSite.body, /Origin http:\/\/evil\.example is not this UI/);

  const allowed = await call(port, '/api/action', {
    method: 'POST',
    headers: { authorization: `Bearer ${w.tokens.editor}`, ...origin, 'content-type': 'application/json' },
    body: action('apps').replace('"namespace":""', `"namespace":"${w.ns}"`),
  });
  assert.equal(allowed.status, 200, allowed.body);
  const ks = await w.client.get({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    namespace: w.ns,
    name: 'apps',
  });
  assert.ok(
    ks.metadata.annotations?.['reconcile.mooring.dev/requestedAt'],
    'the reconcile request was written',
  );

  for (const token of Object.values(w.tokens)) assert.ok(!output().includes(token), 'no token in the output');
});

test('in-cluster UI behind a proxy: X-Remote-User is believed only with the proxy secret, then RBAC decides', async (t) => {
  const w = await world(t);
  const secretFile = join(w.dir, 'proxy-secret');
  const secret = 'a-long-random-secret-only-the-proxy-knows';
  await writeFile(secretFile, `${secret}\n`);
  const { port, output } = await startServer(
    t,
    w,
    ['--auth', 'proxy', '--proxy-secret-file', secretFile],
    'cli',
  );
  const post = (headers: Record<string, string>) =>
    call(port, '/api/action', {
      method: 'POST',
      headers: { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json', ...headers },
      body: action('apps').replace('"namespace":""', `"namespace":"${w.ns}"`),
    });

  const untrusted = await post({ 'x-remote-user': 'alice' });
  assert.equal(untrusted.status, 401);
  assert.match(JSON.parse(untrusted.body).message, /believed only from the authenticating proxy/);
  const wrongSecret = await post({ 'x-remote-user': 'alice', 'x-mooring-proxy-secret': 'guess' });
  assert.equal(wrongSecret.status, 401);
  assert.equal((await call(port, '/api/objects')).status, 401);

  const bob = await post({ 'x-remote-user': 'bob', 'x-mooring-proxy-secret': secret });
  assert.equal(bob.status, 403, bob.body);
  assert.match(JSON.parse(bob.body).message, /User "bob" cannot patch/);
  const alice = await post({
    'x-remote-user': 'alice',
    'x-remote-group': 'team-a',
    'x-mooring-proxy-secret': secret,
  });
  assert.equal(alice.status, 200, alice.body);
  assert.ok(!output().includes(secret), 'no secret in the output');
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

test("in-cluster UI diff as the signed-in user: an editor sees a hand edit with the Secret masked, a reader gets the API server's refusal of the dry run", async (t) => {
  const w = await world(t);
  // Git declares a ConfigMap and a Secret; the source operator serves the artifact the diff renders.
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('platform');
  const fromGit = 'pa55-declared-in-git';
  const byHand = 'pa55-set-by-hand';
  await repo.commit({
    'apps/kustomization.yaml': 'resources: [settings.yaml, credentials.yaml]\n',
    'apps/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${w.ns}\ndata:\n  registry: registry.example\n`,
    'apps/credentials.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: credentials\n  namespace: ${w.ns}\ndata:\n  password: ${b64(fromGit)}\n`,
  });
  await startGitOpsOperators(t, w.ns);
  await w.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'platform', namespace: w.ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  });
  const cmKey = { apiVersion: 'v1', kind: 'ConfigMap', namespace: w.ns, name: 'settings' };
  const secretKey = { apiVersion: 'v1', kind: 'Secret', namespace: w.ns, name: 'credentials' };
  // Ready first, so no reconcile still due puts the hand edits back before the diff sees them.
  await eventually(
    'the Kustomization applied both objects',
    async () => {
      const ks = await w.client.get<
        KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
      >({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: w.ns, name: 'apps' });
      return (
        ks.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
        (await w.client.getOrUndefined(cmKey)) &&
        (await w.client.getOrUndefined(secretKey))
      );
    },
    120_000,
  );
  // Suspended, as one suspends before editing by hand: otherwise the drift wake puts the edits back at once.
  await w.client.mergePatch(
    { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: w.ns, name: 'apps' },
    { spec: { suspend: true } },
  );
  await w.client.mergePatch(cmKey, { data: { registry: 'hand-edited.example' } });
  await w.client.mergePatch(secretKey, { data: { password: b64(byHand) } });

  // The editor may read and patch ConfigMaps and Secrets; the viewer may only read ConfigMaps.
  // The UI's own account may do neither: only the user's rights can make the diff.
  const create = (o: object) =>
    w.client.create({ ...(o as KubeObject), metadata: { ...(o as KubeObject).metadata, namespace: w.ns } });
  const coreRole = (name: string, resources: string[], verbs: string[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules: [{ apiGroups: [''], resources, verbs }],
  });
  await create(coreRole('patch-config', ['configmaps', 'secrets'], ['get', 'patch']));
  await create(coreRole('read-config', ['configmaps'], ['get', 'list', 'watch']));
  const sub = (name: string) => ({ kind: 'ServiceAccount', name, namespace: w.ns });
  await create(binding('RoleBinding', 'editor-config', 'Role', 'patch-config', sub('editor')));
  await create(binding('RoleBinding', 'viewer-config', 'Role', 'read-config', sub('viewer')));

  const { port, output } = await startServer(t, w, ['--auth', 'token'], 'image');
  const replies: Reply[] = [];
  const diffAs = async (token: string) => {
    const reply = await call(port, `/api/diff/${w.ns}/apps`, {
      headers: { authorization: `Bearer ${token}` },
    });
    replies.push(reply);
    return reply;
  };

  // Polled: the UI's watch must first see the source's artifact, and RBAC its new bindings.
  const edited = await eventually(
    "the editor's diff",
    async () => {
      const reply = await diffAs(w.tokens.editor);
      if (reply.status !== 200) throw new Error(`${reply.status} ${reply.body}`);
      return JSON.parse(reply.body) as { diffs: ObjectDiff[] };
    },
    120_000,
  );
  const byId = new Map(edited.diffs.map((d) => [d.id, d]));
  const config = byId.get(`ConfigMap/${w.ns}/settings`);
  const secret = byId.get(`Secret/${w.ns}/credentials`);
  assert.ok(config && secret, JSON.stringify(edited));
  assert.equal(config.change, 'configured');
  assert.match(config.patch, /^-\s+registry: hand-edited\.example$/m);
  assert.match(config.patch, /^\+\s+registry: registry\.example$/m);
  assert.equal(secret.change, 'configured', 'the hand-set password shows as a changed line');
  assert.match(secret.patch, /^-\s+password: "\*\*\* \(before\)"$/m);
  assert.match(secret.patch, /^\+\s+password: "\*\*\* \(after\)"$/m);

  const refused = await eventually(
    "the viewer's diff refused at the dry run",
    async () => {
      const reply = await diffAs(w.tokens.viewer);
      return reply.status === 403 && /cannot patch/.test(reply.body) ? reply : undefined;
    },
    60_000,
  );
  assert.match(
    JSON.parse(refused.body).message,
    new RegExp(
      `server-side dry-run of ConfigMap/${w.ns}/settings failed: .*User "system:serviceaccount:${w.ns}:viewer" cannot patch resource "configmaps"`,
    ),
  );

  for (const reply of replies)
    for (const value of [fromGit, byHand, b64(fromGit), b64(byHand)])
      assert.ok(!reply.body.includes(value), 'no Secret value, plain or base64, in any reply');
  for (const token of Object.values(w.tokens)) {
    assert.ok(!output().includes(token), 'no token in the output');
    assert.ok(!replies.some((r) => r.body.includes(token)), 'no token in a reply');
  }
});

test('in-cluster UI diff of a HelmRelease as the signed-in user: the chart its HelmChart holds, rendered as the operator would, against a hand edit', async (t) => {
  const w = await world(t);
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('charts');
  await repo.commit({
    'charts/tiny/Chart.yaml': 'apiVersion: v2\nname: tiny\nversion: 0.1.0\n',
    'charts/tiny/values.yaml': 'greeting: hi\n',
    'charts/tiny/templates/config.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n',
  });
  await startGitOpsOperators(t, w.ns);
  await w.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'charts', namespace: w.ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  });
  const hrKey = { apiVersion: HELM_API_VERSION, kind: 'HelmRelease', namespace: w.ns, name: 'web' };
  await w.client.create({
    ...hrKey,
    metadata: { name: 'web', namespace: w.ns },
    spec: {
      interval: '1h',
      chart: {
        spec: {
          chart: './charts/tiny',
          sourceRef: { kind: 'GitRepository', name: 'charts' },
          interval: '1h',
        },
      },
      values: { greeting: 'hello' },
    },
  } as KubeObject);
  const cmKey = { apiVersion: 'v1', kind: 'ConfigMap', namespace: w.ns, name: 'web-config' };
  await eventually(
    'the HelmRelease installed',
    async () => {
      const hr = await w.client.get<
        KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
      >(hrKey);
      return (
        hr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
        (await w.client.getOrUndefined(cmKey))
      );
    },
    180_000,
  );
  await w.client.mergePatch(cmKey, { data: { greeting: 'tampered' } });
  // What `mooring diff helmrelease` reads, as the editor: the HelmChart, the release history
  // (Helm's Secrets) and the objects it dry-runs.
  const create = (o: object) =>
    w.client.create({ ...(o as KubeObject), metadata: { ...(o as KubeObject).metadata, namespace: w.ns } });
  await create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'diff-releases' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
      { apiGroups: ['source.mooring.dev'], resources: ['helmcharts'], verbs: ['get'] },
    ],
  });
  await create(
    binding('RoleBinding', 'editor-releases', 'Role', 'diff-releases', {
      kind: 'ServiceAccount',
      name: 'editor',
      namespace: w.ns,
    }),
  );

  const { port } = await startServer(t, w, ['--auth', 'token'], 'image');
  const edited = await eventually(
    "the editor's diff of the HelmRelease",
    async () => {
      const reply = await call(port, `/api/diff/HelmRelease/${w.ns}/web`, {
        headers: { authorization: `Bearer ${w.tokens.editor}` },
      });
      if (reply.status !== 200) throw new Error(`${reply.status} ${reply.body}`);
      return JSON.parse(reply.body) as { diffs: ObjectDiff[] };
    },
    120_000,
  );
  const config = edited.diffs.find((d) => d.id === `ConfigMap/${w.ns}/web-config`);
  assert.ok(config, JSON.stringify(edited));
  assert.equal(config.change, 'configured');
  assert.match(config.patch, /^-\s+greeting: tampered$/m);
  assert.match(config.patch, /^\+\s+greeting: hello$/m);

  const notDiffable = await call(port, `/api/diff/GitRepository/${w.ns}/charts`, {
    headers: { authorization: `Bearer ${w.tokens.editor}` },
  });
  assert.equal(notDiffable.status, 404);
  assert.match(
    JSON.parse(notDiffable.body).message,
    /Kustomization or HelmRelease objects, not GitRepository/,
  );
});
