// Every fixture under testdata/sops was made by the real sops binary (hack/gen-sops-fixtures.ts);
// `*.plain.*` is what `sops decrypt` printed for it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseDocument } from 'yaml';
import { DecryptionError, type DecryptionKeys, decryptFile, isSopsEncrypted } from './index.ts';

const DIR = join(import.meta.dirname, '../../testdata/sops');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const keys: DecryptionKeys = { ageIdentities: [read('age.agekey')] };
const wrongKeys: DecryptionKeys = { ageIdentities: [read('wrong.agekey')] };
const manifest = (name: string) => parse(read(name)) as Record<string, unknown>;

/** The secret values of a Secret manifest (and their base64 decodings), to prove none leaks into an error. */
function secretsOf(doc: Record<string, unknown>): string[] {
  const values = Object.values({ ...(doc.data as object), ...(doc.stringData as object) }) as string[];
  return values.flatMap((v) => [v, Buffer.from(v, 'base64').toString('utf8')]).filter((v) => v.length >= 4);
}

/** Secret values in the plaintext of each file fixture. */
const FILE_SECRETS: Record<string, string[]> = {
  settings: ['db.internal', 'primary', 'secondary', '2024-01-02T03:04:05Z'],
  config: ['second', 'nested'],
  app: ['admin', 'pa=ss#word', 'hello'],
  blob: ['line one', 'not yaml'],
};

async function refused(
  promise: Promise<unknown>,
  message: RegExp,
  mustNotContain: string[],
): Promise<DecryptionError> {
  const err = await promise.then(
    () => assert.fail('decryption should have been refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DecryptionError, `expected a DecryptionError, got ${String(err)}`);
  assert.match(err.message, message);
  for (const secret of mustNotContain)
    assert.ok(!err.message.includes(secret), 'an error message carries plaintext');
  for (const key of keys.ageIdentities[0]!.match(/AGE-SECRET-KEY-1\w+/g)!) {
    assert.ok(!err.message.includes(key.slice(0, 20)), 'an error message carries key material');
  }
  assert.ok(!err.message.includes('ENC['), 'an error message carries ciphertext');
  return err;
}

/** A fixture's text with the value at `path` set (or added), everything else as sops wrote it. */
function edited(name: string, path: (string | number)[], value: unknown): string {
  const doc = parseDocument(read(name));
  doc.setIn(path, value);
  return doc.toString();
}

/** Secret manifests as the kustomize build reads them: one YAML file each, through decryptFile. */
describe('decryptFile: Secret manifests', () => {
  const decrypt = (text: string, k: DecryptionKeys = keys, name = 'secret.enc.yaml') =>
    decryptFile(text, 'yaml', k, name).then((out) => parse(out) as Record<string, unknown>);

  for (const name of ['secret-stringdata', 'secret-data', 'unencrypted-regex']) {
    test(`${name}: decrypts to exactly what sops decrypts, key order kept`, async () => {
      const plain = await decrypt(read(`${name}.enc.yaml`));
      const expected = manifest(`${name}.plain.yaml`);
      assert.deepEqual(plain, expected);
      assert.equal(JSON.stringify(plain), JSON.stringify(expected));
      assert.equal('sops' in plain, false);
    });

    test(`${name}: a value changed after encryption is refused (MAC mismatch)`, async () => {
      await refused(
        decrypt(read(`${name}.tampered.enc.yaml`)),
        /MAC mismatch.*changed after it was encrypted/,
        secretsOf(manifest(`${name}.plain.yaml`)),
      );
    });

    test(`${name}: the wrong age key is refused and the file named`, async () => {
      await refused(
        decrypt(read(`${name}.enc.yaml`), wrongKeys, `${name}.enc.yaml`),
        new RegExp(`^no age identity in the decryption Secret can decrypt ${name}\\.enc\\.yaml$`),
        secretsOf(manifest(`${name}.plain.yaml`)),
      );
    });
  }

  test('a forged MAC is refused', async () => {
    await refused(
      decrypt(read('secret-stringdata.forged-mac.enc.yaml')),
      /MAC mismatch/,
      secretsOf(manifest('secret-stringdata.plain.yaml')),
    );
  });

  test('mac_only_encrypted: plain metadata may change, the encrypted values may not', async () => {
    const plain = await decrypt(
      edited('secret-data.enc.yaml', ['metadata', 'annotations', 'note'], 'edited by kustomize'),
    );
    assert.equal(
      (plain.data as Record<string, string>).token,
      Buffer.from('tok-9f8e7d6c5b4a').toString('base64'),
    );
  });

  test('a MAC over all values breaks when a plain field is added after encryption', async () => {
    await refused(
      decrypt(edited('secret-stringdata.enc.yaml', ['metadata', 'namespace'], 'added-later')),
      /MAC mismatch/,
      [],
    );
  });

  test('an encrypted value replaced by plaintext is refused without echoing it', async () => {
    await refused(
      decrypt(edited('secret-stringdata.enc.yaml', ['stringData', 'password'], 'plaintext-injected')),
      /stringData\.password.*not encrypted/,
      ['plaintext-injected'],
    );
  });

  test('ciphertext moved to another key fails authentication', async () => {
    const password = (manifest('secret-stringdata.enc.yaml').stringData as Record<string, string>).password;
    await refused(
      decrypt(edited('secret-stringdata.enc.yaml', ['stringData', 'username'], password)),
      /stringData\.username.*cannot be decrypted/,
      secretsOf(manifest('secret-stringdata.plain.yaml')),
    );
  });

  test('several keys and key files with comments: the matching one is used', async () => {
    const plain = await decrypt(read('secret-stringdata.enc.yaml'), {
      ageIdentities: [read('wrong.agekey'), `# other\n${read('age.agekey')}`],
    });
    assert.equal((plain.stringData as Record<string, string>).password, 's3cr3t-Pa55word');
  });

  test('a malformed age key is refused without echoing it', async () => {
    const bogus = 'AGE-SECRET-KEY-1QQQQNOTAREALKEYQQQQ';
    await refused(decrypt(read('secret-stringdata.enc.yaml'), { ageIdentities: [bogus] }), /age/, [
      bogus,
      bogus.slice(16),
    ]);
  });

  test('no identity at all is refused clearly', async () => {
    await refused(
      decrypt(read('secret-stringdata.enc.yaml'), { ageIdentities: [] }),
      /holds no age identity/,
      [],
    );
  });
});

describe('decryptFile', () => {
  test('yaml: every type sops writes, timestamps and lists, as sops decrypts them', async () => {
    const out = await decryptFile(read('settings.enc.yaml'), 'yaml', keys);
    assert.deepEqual(parse(out), parse(read('settings.plain.yaml')));
    assert.ok(!out.includes('ENC['), 'encrypted comments are dropped');
    assert.ok(!/^sops:/m.test(out));
  });

  test('json: same values and key order as sops, integer-like keys included', async () => {
    const out = await decryptFile(read('config.enc.json'), 'json', keys);
    assert.equal(out, read('config.plain.json'));
  });

  test('dotenv: byte for byte what sops prints', async () => {
    assert.equal(await decryptFile(read('app.enc.env'), 'dotenv', keys), read('app.plain.env'));
  });

  test('binary: the original bytes', async () => {
    assert.equal(await decryptFile(read('blob.enc.bin'), 'binary', keys), read('blob.plain.bin'));
  });

  const formats = [
    ['settings', 'yaml', 'yaml'],
    ['config', 'json', 'json'],
    ['app', 'env', 'dotenv'],
    ['blob', 'bin', 'binary'],
  ] as const;
  for (const [name, ext, format] of formats) {
    test(`${format}: tampered copy refused (MAC mismatch), wrong key refused, no plaintext in errors`, async () => {
      const secrets = FILE_SECRETS[name]!;
      await refused(
        decryptFile(read(`${name}.tampered.enc.${ext}`), format, keys, `${name}.${ext}`),
        new RegExp(`^${name}\\.${ext} failed its integrity check \\(MAC mismatch\\)`),
        secrets,
      );
      await refused(
        decryptFile(read(`${name}.enc.${ext}`), format, wrongKeys, `${name}.${ext}`),
        new RegExp(`^no age identity in the decryption Secret can decrypt ${name}\\.${ext}$`),
        secrets,
      );
    });
  }

  test('a file that is not sops-encrypted is refused, not passed through', async () => {
    await refused(decryptFile('a: 1\n', 'yaml', keys, 'plain.yaml'), /plain\.yaml has no sops metadata/, []);
  });
});

describe('isSopsEncrypted', () => {
  test('true for sops output, as objects and as text, in every format', () => {
    assert.equal(isSopsEncrypted(manifest('secret-stringdata.enc.yaml')), true);
    assert.equal(isSopsEncrypted(JSON.parse(read('config.enc.json'))), true);
    for (const file of ['settings.enc.yaml', 'config.enc.json', 'app.enc.env', 'blob.enc.bin']) {
      assert.equal(isSopsEncrypted(read(file)), true, file);
    }
  });

  test('false for plain input, which is left untouched', () => {
    const plain = manifest('secret-stringdata.plain.yaml');
    const before = structuredClone(plain);
    for (const doc of [
      plain,
      null,
      'text',
      42,
      [],
      { sops: 'x' },
      { sops: { mac: 7 } },
      { kind: 'Secret', sops: {} },
    ]) {
      assert.equal(isSopsEncrypted(doc), false, JSON.stringify(doc));
    }
    assert.deepEqual(plain, before);
    for (const file of ['settings.plain.yaml', 'config.plain.json', 'app.plain.env', 'blob.plain.bin']) {
      assert.equal(isSopsEncrypted(read(file)), false, file);
    }
    assert.equal(isSopsEncrypted({ kind: 'ConfigMap', data: { sops: 'mac' }, sops: { mac: '' } }), false);
  });
});
