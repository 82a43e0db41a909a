import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { testNamespace } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

test('version --client prints the package version without a cluster and exits 0', async () => {
  const r = await mooring(['version', '--client'], { env: { KUBECONFIG: '/nonexistent/kubeconfig' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^mooring: v\d+\.\d+\.\d+\n$/);
});

test('--version prints the client version as version --client does; install --version stays the image tag', async () => {
  const env = { KUBECONFIG: '/nonexistent/kubeconfig' };
  const [long, short, client, tagged] = await Promise.all([
    mooring(['--version'], { env }),
    mooring(['-v'], { env }),
    mooring(['version', '--client'], { env }),
    mooring(['install', '--export', '--version', 'v9.9.9'], { env }),
  ]);
  assert.equal(long.code, 0, long.stderr);
  assert.equal(long.stdout, client.stdout);
  assert.equal(short.stdout, client.stdout);
  assert.equal(long.stderr, '');
  assert.equal(tagged.code, 0, tagged.stderr);
  assert.match(tagged.stdout, /image: ghcr\.io\/mooring-dev\/mooring:v9\.9\.9$/m);
});

test('version asks the cluster for the operators and says when none is installed; an unreachable cluster is exit 1', async (t) => {
  const ns = await testNamespace(t, 'cli-version');
  const none = await mooring(['version', '-n', ns]);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /^mooring: v\d+\.\d+\.\d+\n$/);
  assert.equal(none.stderr, `no Mooring operators in ${ns}: install them with 'mooring install'\n`);
  const unreachable = await mooring(['version', '--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(unreachable.code, 1);
  assert.match(unreachable.stdout, /^mooring: v\d+\.\d+\.\d+\n$/);
  assert.match(
    unreachable.stderr,
    /^✗ no cluster reached: cannot read the kubeconfig \/nonexistent\/kubeconfig/,
  );
});

test('version without a reachable cluster prints the client version, then one plain line naming the server and why', async () => {
  const home = await mkdtemp(join(tmpdir(), 'mooring-cli-home-'));
  try {
    // No kubeconfig at all: client-node would fall back to http://localhost:8080 and refuse it as plain HTTP.
    const none = await mooring(['version'], { env: { KUBECONFIG: undefined, HOME: home } });
    assert.equal(none.code, 1);
    assert.match(none.stdout, /^mooring: v\d+\.\d+\.\d+\n$/);
    assert.equal(
      none.stderr,
      `✗ no cluster reached: no kubeconfig found ($KUBECONFIG is not set and ${home}/.kube/config does not exist): pass --kubeconfig <file>.\n`,
    );
    // A kubeconfig whose server nothing listens on (port 1 on loopback refuses at once).
    const kubeconfig = join(home, 'config');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: here, context: {cluster: c, user: u}}]',
        'current-context: here',
      ].join('\n'),
    );
    const refused = await mooring(['version'], { env: { KUBECONFIG: kubeconfig, HOME: home } });
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /^mooring: v\d+\.\d+\.\d+\n$/);
    assert.equal(
      refused.stderr,
      '✗ no cluster reached at https://127.0.0.1:1: nothing accepts connections there (connection refused); check --kubeconfig and --context, or start a cluster.\n',
    );
    // A plain-HTTP server is named as such, not as client-node's skipTLSVerify rule.
    await writeFile(kubeconfig, (await readFile(kubeconfig, 'utf8')).replace('https://', 'http://'));
    const plain = await mooring(['version'], { env: { KUBECONFIG: kubeconfig, HOME: home } });
    assert.equal(plain.code, 1);
    assert.doesNotMatch(plain.stderr, /skipTLSVerify/);
    assert.match(
      plain.stderr,
      /^✗ no cluster reached: the kubeconfig's server http:\/\/127\.0\.0\.1:1 is plain HTTP[^\n]*\n$/,
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('an unknown command is a usage error with a suggestion, exit 2', async () => {
  const r = await mooring(['buld']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command 'buld'/);
  assert.match(r.stderr, /Did you mean build\?/);
});

test('a kubeconfig that does not exist fails in one sentence naming the flag, exit 1', async () => {
  const r = await mooring(['get', 'all', '--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^✗ cannot read the kubeconfig \/nonexistent\/kubeconfig .*pass --kubeconfig <file>\.\n$/,
  );
});

test('an unknown --context names the contexts that exist', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-'));
  try {
    const kubeconfig = join(dir, 'config');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: here, context: {cluster: c, user: u, namespace: team-a}}]',
        'current-context: here',
      ].join('\n'),
    );
    const r = await mooring(['get', 'all', '--context', 'there'], { env: { KUBECONFIG: kubeconfig } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /context 'there' is not in the kubeconfig: use one of here\./);
    // The right context but no server: the error says the API server is unreachable.
    const down = await mooring(['get', 'all', '--context', 'here'], { env: { KUBECONFIG: kubeconfig } });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach the API server .*check --kubeconfig and --context/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('bash completion completes subcommands and options from the command tree', async () => {
  const r = await mooring(['completion', 'bash']);
  assert.equal(r.code, 0);
  const complete = async (words: string[]): Promise<string[]> => {
    const script = `${r.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mooring; echo "\${COMPREPLY[@]}"`;
    const { stdout } = await promisify(execFile)('bash', ['-c', script]);
    return stdout.trim().split(/\s+/);
  };
  assert.deepEqual(await complete(['mooring', 'bu']), ['build']);
  assert.deepEqual(await complete(['mooring', 'build', 'k']), ['kustomization', 'ks']);
  assert.ok((await complete(['mooring', 'build', 'kustomization', '--p'])).includes('--path'));
  assert.ok((await complete(['mooring', 'get', '--kube'])).includes('--kubeconfig'));
  const zsh = await mooring(['completion', 'zsh']);
  assert.match(zsh.stdout, /^#compdef mooring\n.*bashcompinit/);
  const fish = await mooring(['completion', 'fish']);
  assert.equal(fish.code, 2);
  assert.match(fish.stderr, /no completion for shell 'fish': use bash or zsh\./);
});
