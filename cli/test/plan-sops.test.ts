// `mooring plan` on a Kustomization with SOPS files (fixtures made by the real sops 3.11.0,
// operators/kustomize/testdata/sops): without an age key the plan says it compared ciphertext;
// with SOPS_AGE_KEY_FILE it decrypts as the operator does. Values are masked either way.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { mooring } from './run-cli.ts';

const SOPS = fileURLToPath(new URL('../../operators/kustomize/testdata/sops/', import.meta.url));
const plainValues = Object.values(
  (
    parse(readFileSync(join(SOPS, 'secret-stringdata.plain.yaml'), 'utf8')) as {
      stringData: Record<string, string>;
    }
  ).stringData,
);

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@x',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@x',
    },
  });

test('SOPS files: compared as ciphertext without a key, decrypted with SOPS_AGE_KEY_FILE, values masked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mooring-plan-sops-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'remote', 'add', 'origin', 'https://git.example/acme/sealed');
  mkdirSync(join(dir, 'sealed'));
  writeFileSync(
    join(dir, 'sync.yaml'),
    `apiVersion: source.mooring.dev/v1
kind: GitRepository
metadata: {name: sealed, namespace: default}
spec: {url: https://git.example/acme/sealed, interval: 1m}
---
apiVersion: kustomize.mooring.dev/v1
kind: Kustomization
metadata: {name: sealed, namespace: default}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: sealed}
  path: ./sealed
  prune: true
  decryption: {provider: sops, secretRef: {name: sops-age}}
`,
  );
  copyFileSync(join(SOPS, 'secret-stringdata.enc.yaml'), join(dir, 'sealed/secret.enc.yaml'));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  // The head drops the Secret: its deletion shows the whole object.
  rmSync(join(dir, 'sealed/secret.enc.yaml'));
  writeFileSync(
    join(dir, 'sealed/flags.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flags}\ndata: {a: "1"}\n',
  );
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'head');

  const args = ['plan', '--repo', dir, '--base', 'HEAD~1', '--head', 'HEAD'];
  const offline = await mooring(args, { env: { SOPS_AGE_KEY: '', SOPS_AGE_KEY_FILE: '' } });
  assert.equal(offline.code, 2, offline.stderr);
  assert.match(
    offline.stdout,
    /Secret\/db-credentials is SOPS-encrypted and no age key was given \(SOPS_AGE_KEY or SOPS_AGE_KEY_FILE\): compared as ciphertext/,
  );
  assert.match(offline.stdout, /deleted Secret\/db-credentials[\s\S]*- {2}password: "\*\*\* \(before\)"/);
  assert.doesNotMatch(offline.stdout, /ENC\[AES256_GCM/);

  const withKey = await mooring(args, { env: { SOPS_AGE_KEY_FILE: join(SOPS, 'age.agekey') } });
  assert.equal(withKey.code, 2, withKey.stderr);
  assert.doesNotMatch(withKey.stdout, /SOPS-encrypted/);
  assert.match(withKey.stdout, /deleted Secret\/db-credentials[\s\S]*- {2}password: "\*\*\* \(before\)"/);
  assert.doesNotMatch(withKey.stdout, /sops:|mac:/);
  for (const value of [...plainValues, ...plainValues.map((v) => Buffer.from(v).toString('base64'))])
    for (const out of [offline.stdout, withKey.stdout])
      assert.ok(!out.includes(value), 'a Secret value is printed');
});
