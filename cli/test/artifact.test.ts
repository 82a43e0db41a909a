import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { kubectl, TestRegistry, testCluster, testNamespace } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const USER = 'pusher';
const PASSWORD = 'reg-SECRET-pw-5d1c';
const GIT_TOKEN = 'tok-SECRET-git-77e0';
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\ndata:\n  answer: "42"\n';
const DIGEST = /@(sha256:[a-f0-9]{64})$/m;

async function tempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A folder as a CI job would push it: manifests, plus things Flux leaves out (.git, images, links). */
async function deployFolder(t: TestContext): Promise<string> {
  const dir = await tempDir(t, 'mooring-push-');
  await mkdir(join(dir, 'apps'));
  await writeFile(join(dir, 'apps', 'cm.yaml'), CM);
  await writeFile(join(dir, 'kustomization.yaml'), 'resources:\n  - apps/cm.yaml\n');
  await mkdir(join(dir, '.git'));
  await writeFile(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(dir, 'logo.png'), 'not really a png');
  await symlink('apps/cm.yaml', join(dir, 'alias.yaml'));
  return dir;
}

/** Every file below `dir` with its content, by relative path. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = join(entry.parentPath, entry.name);
    out[abs.slice(dir.length + 1)] = await readFile(abs, 'utf8');
  }
  return out;
}

function digestOf(stdout: string): string {
  const m = DIGEST.exec(stdout.trim());
  assert.ok(m, `no digest in: ${stdout}`);
  return m[1]!;
}

test('push, list, tag and pull an artifact through a registry with htpasswd auth', async (t) => {
  const registry = await TestRegistry.start({ htpasswd: { username: USER, password: PASSWORD } });
  t.after(() => registry.close());
  // An empty docker config, so the developer's own ~/.docker never leaks into the test.
  const dockerConfig = await tempDir(t, 'mooring-docker-');
  const env = { DOCKER_CONFIG: dockerConfig, MOORING_OCI_CREDS: undefined };
  const folder = await deployFolder(t);
  const url = `${registry.url('team/app')}:v1`;
  const push = (creds: string[], extra: Record<string, string> = {}) =>
    mooring(
      [
        'push',
        'artifact',
        url,
        '--path',
        folder,
        '--source',
        `https://oauth2:${GIT_TOKEN}@git.example.com/team/app.git`,
        '--revision',
        'main@sha1:0123456789abcdef0123456789abcdef01234567',
        '--insecure-registry',
        ...creds,
      ],
      { env: { ...env, ...extra } },
    );

  const first = await push(['--creds', `${USER}:${PASSWORD}`]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, new RegExp(`^✔ pushed ${url}@sha256:[a-f0-9]{64}\\n$`));
  assert.match(first.stderr, /► pushing artifact to /);
  assert.match(first.stderr, /► skipped alias\.yaml: /);
  const digest = digestOf(first.stdout);

  // Unchanged tree, credentials from the environment this time: the same digest.
  const again = await push([], { MOORING_OCI_CREDS: `${USER}:${PASSWORD}` });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(digestOf(again.stdout), digest);
  assert.match(again.stderr, /► content unchanged since \d{4}-\d\d-\d\dT[\d:]+Z: keeping the digest/);

  // Credentials from the docker config for list; the Git token never reached the registry.
  const auth = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  await writeFile(
    join(dockerConfig, 'config.json'),
    JSON.stringify({ auths: { [registry.host]: { auth } } }),
  );
  const listed = await mooring(['list', 'artifacts', registry.url('team/app'), '--insecure-registry'], {
    env,
  });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^ARTIFACT\s+DIGEST\s+SOURCE\s+REVISION$/m);
  assert.match(
    listed.stdout,
    new RegExp(
      `^${url}\\s+${digest}\\s+https://git\\.example\\.com/team/app\\.git\\s+main@sha1:0123456789abcdef0123456789abcdef01234567$`,
      'm',
    ),
  );
  assert.equal(listed.stdout.includes(GIT_TOKEN), false);

  const tagged = await mooring(['tag', 'artifact', url, '--tag', 'stable', '--insecure-registry'], { env });
  assert.equal(tagged.code, 0, tagged.stderr);
  assert.equal(tagged.stdout, `✔ tagged ${registry.url('team/app')}:stable@${digest}\n`);
  const json = await mooring(
    ['list', 'artifacts', registry.url('team/app'), '--insecure-registry', '-o', 'json'],
    {
      env,
    },
  );
  const rows = JSON.parse(json.stdout) as { tag: string; digest: string }[];
  assert.deepEqual(
    rows.map((r) => [r.tag, r.digest]),
    [
      ['stable', digest],
      ['v1', digest],
    ],
  );

  const out = join(await tempDir(t, 'mooring-pull-'), 'out');
  const pulled = await mooring(
    ['pull', 'artifact', `${registry.url('team/app')}:stable`, '--output', out, '--insecure-registry'],
    { env },
  );
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.match(pulled.stdout, /^✔ source https:\/\/git\.example\.com\/team\/app\.git$/m);
  assert.match(pulled.stdout, /^✔ revision main@sha1:0123456789abcdef0123456789abcdef01234567$/m);
  assert.match(pulled.stdout, new RegExp(`^✔ digest ${digest}$`, 'm'));
  // .git and images are left out by Flux's default --ignore-paths; the link is never followed.
  assert.deepEqual(await tree(out), {
    'apps/cm.yaml': CM,
    'kustomization.yaml': 'resources:\n  - apps/cm.yaml\n',
  });

  // A wrong password: one sentence naming the registry, exit 1, and the password nowhere.
  const wrong = `${PASSWORD}-wrong`;
  const denied = await push(['--creds', `${USER}:${wrong}`]);
  assert.equal(denied.code, 1, denied.stderr);
  const error = denied.stderr.split('\n').filter((l) => l.startsWith('✗'));
  assert.equal(error.length, 1, denied.stderr);
  assert.match(
    error[0]!,
    new RegExp(`^✗ registry ${registry.host.replace(/\./g, '\\.')} rejected the credentials.*--creds`),
  );
  for (const secret of [wrong, PASSWORD, GIT_TOKEN])
    assert.equal(`${denied.stdout}${denied.stderr}`.includes(secret), false, 'a secret was printed');

  // A link out of the folder is refused before anything is pushed.
  await symlink('/etc/hostname', join(folder, 'escape.yaml'));
  const escaped = await push(['--creds', `${USER}:${PASSWORD}`]);
  assert.equal(escaped.code, 1, escaped.stderr);
  assert.match(escaped.stderr, /^✗ escape\.yaml is a symlink to outside --path/m);
  assert.equal(escaped.stderr.includes('► pushing'), false);
});

test('an OCIRepository delivers a pushed artifact to a Kustomization', async (t) => {
  const registry = await TestRegistry.start({ htpasswd: { username: USER, password: PASSWORD } });
  t.after(() => registry.close());
  const ns = await testNamespace(t, 'cli-artifact');
  const { kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig, DOCKER_CONFIG: await tempDir(t, 'mooring-docker-') };
  const folder = await deployFolder(t);
  const pushed = await mooring(
    [
      'push',
      'artifact',
      `${registry.url('team/app')}:v1`,
      '--path',
      folder,
      '--source',
      'https://git.example.com/team/app.git',
      '--revision',
      'main@sha1:89abcdef0123456789abcdef0123456789abcdef',
      '--insecure-registry',
      '--output',
      'json',
    ],
    { env: { ...env, MOORING_OCI_CREDS: `${USER}:${PASSWORD}` } },
  );
  assert.equal(pushed.code, 0, pushed.stderr);
  const { digest } = JSON.parse(pushed.stdout) as { digest: string };

  await startGitOpsOperators(t, ns);
  for (const args of [
    [
      'create',
      'secret',
      'oci',
      'regcred',
      '--url',
      registry.host,
      '--username',
      USER,
      '--password',
      PASSWORD,
    ],
    [
      'create',
      'source',
      'oci',
      'app',
      '--url',
      registry.url('team/app'),
      '--tag',
      'v1',
      '--secret-ref',
      'regcred',
      '--insecure',
      '--interval',
      '1h',
    ],
    ['create', 'ks', 'app', '--source', 'OCIRepository/app', '--path', './', '--prune', '--interval', '1h'],
  ]) {
    const r = await mooring([...args, '-n', ns], { env });
    assert.equal(r.code, 0, r.stderr);
  }
  const rec = await mooring(['reconcile', 'ks', 'app', '--with-source', '-n', ns, '--timeout', '90s'], {
    env,
  });
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(rec.stdout, new RegExp(`^✔ OCIRepository ${ns}/app reconciled at revision v1@${digest}`, 'm'));
  assert.match(rec.stdout, new RegExp(`^✔ Kustomization ${ns}/app reconciled at revision v1@${digest}`, 'm'));

  const artifact = JSON.parse(
    await kubectl('get', 'ocirepository', 'app', '-n', ns, '-o', 'jsonpath={.status.artifact}'),
  ) as { revision: string; metadata?: Record<string, string> };
  assert.equal(artifact.revision, `v1@${digest}`);
  assert.equal(
    artifact.metadata?.['org.opencontainers.image.source'],
    'https://git.example.com/team/app.git',
  );
  assert.equal(
    artifact.metadata?.['org.opencontainers.image.revision'],
    'main@sha1:89abcdef0123456789abcdef0123456789abcdef',
  );
  const answer = await kubectl('get', 'configmap', 'from-oci', '-n', ns, '-o', 'jsonpath={.data.answer}');
  assert.equal(answer, '42');
});
