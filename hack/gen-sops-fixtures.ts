// Regenerates the SOPS fixtures of the kustomize operator with the real sops binary and age keys.
// Usage: node --import tsx hack/gen-sops-fixtures.ts [--new-keys]
// Writes operators/kustomize/testdata/sops/: for each fixture, <name>.enc.<ext> (made by `sops
// encrypt`), <name>.plain.<ext> (what `sops decrypt` gives back), <name>.tampered.enc.<ext> (one
// value changed after encryption, MAC left alone) and secret-stringdata.forged-mac.enc.yaml. It
// checks that sops itself refuses every tampered and forged file with a MAC or decryption error.
// The test keys (age.agekey, wrong.agekey) are kept unless --new-keys is given.
import { execFile } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(ROOT, 'operators/kustomize/testdata/sops');
const SOPS = [process.env.SOPS, join(ROOT, 'bin/sops'), '/tmp/sops-bin/sops'].find((p) => p && existsSync(p));
const KEY_NOTE =
  '# TEST KEY ONLY: committed on purpose for Mooring SOPS tests; never protect real secrets with it.\n';

interface Fixture {
  /** File name without `.enc.<ext>`. */
  name: string;
  ext: 'yaml' | 'json' | 'env' | 'bin';
  plain: string;
  rules?: Record<string, unknown>;
  /** Path (map keys; list items by index) of a value to change in the tampered copy, and the new plaintext. */
  tamper: { path: (string | number)[]; value: string; reencrypt: boolean };
}

const FIXTURES: Fixture[] = [
  {
    name: 'secret-stringdata',
    ext: 'yaml',
    rules: { encrypted_regex: '^(data|stringData)$' },
    plain: `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  labels:
    team: payments
type: Opaque
stringData:
  username: admin
  password: s3cr3t-Pa55word
  config.yaml: |
    host: db.internal
    port: 5432
`,
    // A plain value, still covered by the MAC: the classic edit after encryption.
    tamper: { path: ['metadata', 'labels', 'team'], value: 'attackers', reencrypt: false },
  },
  {
    name: 'secret-data',
    ext: 'yaml',
    rules: { encrypted_regex: '^(data|stringData)$', mac_only_encrypted: true },
    plain: `apiVersion: v1
kind: Secret
metadata:
  name: api-token
  annotations:
    note: labels and annotations may change without breaking a mac_only_encrypted MAC
data:
  token: ${Buffer.from('tok-9f8e7d6c5b4a').toString('base64')}
  ca.crt: ${Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64')}
`,
    tamper: { path: ['data', 'token'], value: Buffer.from('tok-forged').toString('base64'), reencrypt: true },
  },
  {
    name: 'unencrypted-regex',
    ext: 'yaml',
    rules: { unencrypted_regex: '^(apiVersion|kind|name|namespace|labels|app)$' },
    plain: `apiVersion: v1
kind: Secret
metadata:
  name: partially-plain
  labels:
    app: shop
stringData:
  apiKey: ak-0123456789
`,
    tamper: { path: ['stringData', 'apiKey'], value: 'ak-evil', reencrypt: true },
  },
  {
    name: 'settings',
    ext: 'yaml',
    plain: `# settings for the generator (this comment gets encrypted too)
database:
  host: db.internal
  port: 5432
  ratio: 0.75
  tls: true
  rotated: 2024-01-02T03:04:05Z
  empty: ""
  nothing: null
replicas:
  - primary
  - 2
  - name: secondary
    weight: 1.5
public_unencrypted:
  # Plain but inside the MAC, in the forms sops rewrites them to: hashed as Go prints them.
  created: 2024-05-06T07:08:09.500Z
  date: 2024-01-02
  spaced: 2024-1-2 3:04:05
  utc: 2024-01-02T03:04:05+00:00
  nanos: 2024-01-02T03:04:05.123456789123Z
  zoned: 2024-01-02t03:04:05+02:00
  quoted: "2024-01-02"
  count: 3
  hex: 0x1F
  big: 123456789012345678901
  huge: 1e21
  tiny: 1.0e-7
  yes: True
  tags: [a, b]
`,
    tamper: { path: ['database', 'host'], value: 'evil.example', reencrypt: true },
  },
  {
    name: 'app',
    ext: 'env',
    plain: '# runtime settings\nDB_USER=admin\nDB_PASSWORD=pa=ss#word\nGREETING=hello\\nworld\nEMPTY=\n',
    tamper: { path: ['DB_PASSWORD'], value: 'changed', reencrypt: true },
  },
  {
    name: 'config',
    ext: 'json',
    // Written out by hand: JSON.stringify would move the integer-like key "10" first.
    plain:
      '{"b": "second", "a": [1.5, true, null, "x"], "10": {"k": 1e21, "n": -7, "tiny": 1e-7}, "nested": {"key": "v"}}\n',
    tamper: { path: ['nested', 'key'], value: 'w', reencrypt: true },
  },
  {
    name: 'blob',
    ext: 'bin',
    plain: 'line one\nline two: not yaml, not json [\n',
    tamper: { path: ['data'], value: 'replaced', reencrypt: true },
  },
];

const sopsType = (ext: Fixture['ext']) => ({ yaml: 'yaml', json: 'json', env: 'dotenv', bin: 'binary' })[ext];

async function sops(
  args: string[],
  keyFile: string,
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(SOPS!, args, {
      env: { ...process.env, SOPS_AGE_KEY_FILE: keyFile, SOPS_AGE_KEY: '' },
      maxBuffer: 16 << 20,
    });
    return { ok: true, stdout, stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function ensureKey(file: string, fresh: boolean): Promise<string> {
  if (fresh || !existsSync(file)) {
    const { stdout } = await run('age-keygen', []);
    await writeFile(file, KEY_NOTE + stdout);
  }
  const text = await readFile(file, 'utf8');
  const recipient = /# public key: (age1[0-9a-z]+)/.exec(text)?.[1];
  if (!recipient) throw new Error(`${file} has no '# public key:' line`);
  return recipient;
}

/** The data key, via the age CLI, from the first age stanza of an encrypted fixture. */
async function dataKey(meta: { age: { enc: string }[] }, keyFile: string, tmp: string): Promise<Buffer> {
  const armored = join(tmp, 'stanza.age');
  await writeFile(armored, meta.age[0]!.enc);
  const out = join(tmp, 'datakey');
  await run('age', ['-d', '-i', keyFile, '-o', out, armored]);
  return readFile(out);
}

/** sops's value encryption (aes/cipher.go): AES-256-GCM, 32-byte IV, AAD = path + ':'. */
function encryptValue(plain: string, key: Buffer, aad: string): string {
  const iv = randomBytes(32);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `ENC[AES256_GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${c.getAuthTag().toString('base64')},type:str]`;
}

function valueAt(doc: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], doc);
}

/** The encrypted document as data, whatever its format. */
function load(text: string, ext: Fixture['ext']): Record<string, unknown> {
  if (ext !== 'env') return parse(text) as Record<string, unknown>;
  const flat: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && !line.startsWith('#')) flat[line.slice(0, eq)] = line.slice(eq + 1).replaceAll('\\n', '\n');
  }
  const age = [{ enc: flat.sops_age__list_0__map_enc! }];
  return { ...flat, sops: { age, lastmodified: flat.sops_lastmodified, mac: flat.sops_mac } };
}

async function main(): Promise<void> {
  if (!SOPS) throw new Error('no sops binary: build it with hack/build-tools.sh or set SOPS=/path/to/sops');
  await mkdir(OUT, { recursive: true });
  const fresh = process.argv.includes('--new-keys');
  const keyFile = join(OUT, 'age.agekey');
  const recipient = await ensureKey(keyFile, fresh);
  await ensureKey(join(OUT, 'wrong.agekey'), fresh);
  const tmp = await mkdtemp(join(tmpdir(), 'mooring-sops-gen-'));
  try {
    for (const f of FIXTURES) {
      const type = sopsType(f.ext);
      const plainFile = join(tmp, `${f.name}.${f.ext}`);
      await writeFile(plainFile, f.plain);
      const config = join(tmp, 'sops.yaml');
      await writeFile(config, JSON.stringify({ creation_rules: [{ age: recipient, ...f.rules }] }));
      const enc = await sops(
        ['--config', config, 'encrypt', '--input-type', type, '--output-type', type, plainFile],
        keyFile,
      );
      if (!enc.ok) throw new Error(`sops could not encrypt ${f.name}: ${enc.stderr}`);
      const encFile = join(OUT, `${f.name}.enc.${f.ext}`);
      await writeFile(encFile, enc.stdout);
      const dec = await sops(['decrypt', '--input-type', type, '--output-type', type, encFile], keyFile);
      if (!dec.ok) throw new Error(`sops could not decrypt its own ${f.name}: ${dec.stderr}`);
      await writeFile(join(OUT, `${f.name}.plain.${f.ext}`), dec.stdout);

      // The tampered copy: one value replaced in the text, the MAC untouched.
      const doc = load(enc.stdout, f.ext);
      const old = String(valueAt(doc, f.tamper.path));
      const aad = `${f.tamper.path.filter((k) => typeof k === 'string').join(':')}:`;
      const key = await dataKey(doc.sops as { age: { enc: string }[] }, keyFile, tmp);
      const replacement = f.tamper.reencrypt ? encryptValue(f.tamper.value, key, aad) : f.tamper.value;
      const occurrences = enc.stdout.split(old).length - 1;
      if (occurrences !== 1) throw new Error(`${f.name}: the value to tamper with is not unique in the file`);
      const tampered = enc.stdout.replace(old, () => replacement);
      const tamperedFile = join(OUT, `${f.name}.tampered.enc.${f.ext}`);
      await writeFile(tamperedFile, tampered);
      const refused = await sops(
        ['decrypt', '--input-type', type, '--output-type', type, tamperedFile],
        keyFile,
      );
      if (refused.ok || !/MAC mismatch/.test(refused.stderr)) {
        throw new Error(`sops did not refuse the tampered ${f.name} with a MAC mismatch: ${refused.stderr}`);
      }

      if (f.name === 'secret-stringdata') {
        // The forged copy: the tampered file with a MAC that was not made with the data key.
        const mac = (doc.sops as { mac: string }).mac;
        const forgedMac = encryptValue(randomBytes(64).toString('hex').toUpperCase(), randomBytes(32), 'x');
        const forgedFile = join(OUT, `${f.name}.forged-mac.enc.${f.ext}`);
        await writeFile(
          forgedFile,
          tampered.replace(mac, () => forgedMac),
        );
        const forged = await sops(['decrypt', forgedFile], keyFile);
        if (forged.ok) throw new Error(`sops accepted the forged MAC of ${f.name}`);
      }
      process.stderr.write(`${f.name}: ok\n`);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
