// Fuzzes SOPS decryption (operators/kustomize/src/sops): files sops wrote (corpus/sops, copied from
// operators/kustomize/testdata/sops), damaged as text and as bytes, in every format sops writes.
// Each is refused with a DecryptionError whose message holds no secret, or decrypts to exactly what
// its MAC covers: a file whose MAC does not hold never yields plaintext.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DecryptionError, decryptFile, type SopsFileFormat } from '@mooring/kustomize-operator/sops';
import { formatFloat } from '@mooring/kustomize-operator/sops/go-format';
import { parse } from 'yaml';
import {
  assertClearError,
  byteEdits,
  check,
  collectProcessWarnings,
  corpusFiles,
  edits,
  fc,
  knownBugs,
  mutate,
  mutateBytes,
} from './fuzz.ts';

const warnings = collectProcessWarnings();
const corpus = new Map(corpusFiles('sops').map(([name, bytes]) => [name, bytes.toString('utf8')]));
const read = (name: string) => {
  const text = corpus.get(name);
  if (text === undefined) throw new Error(`corpus/sops/${name} is missing`);
  return text;
};
const keys = { ageIdentities: [read('age.agekey')] };
const wrongKeys = { ageIdentities: [read('wrong.agekey')] };

interface Fixture {
  name: string;
  format: SopsFileFormat;
  /** Leaves the MAC covers: all, or (mac_only_encrypted) those its rules encrypt. */
  covered: (path: string[]) => boolean;
}

const all = () => true;
const FIXTURES: Fixture[] = [
  { name: 'secret-stringdata.enc.yaml', format: 'yaml', covered: all },
  {
    name: 'secret-data.enc.yaml',
    format: 'yaml',
    covered: (p) => p.some((k) => /^(data|stringData)$/.test(k)),
  },
  { name: 'unencrypted-regex.enc.yaml', format: 'yaml', covered: all },
  { name: 'settings.enc.yaml', format: 'yaml', covered: all },
  { name: 'config.enc.json', format: 'json', covered: all },
  { name: 'app.enc.env', format: 'dotenv', covered: all },
  { name: 'blob.enc.bin', format: 'binary', covered: all },
];
const plainOf = (f: Fixture) => read(f.name.replace('.enc.', '.plain.'));

/** A scalar as sops's MAC sees it (sops.go ToBytes; null and '' add nothing to the hash). */
function macText(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return formatFloat(v);
  return String(v);
}

/**
 * What the MAC vouches for: the covered scalars in document order, concatenated (the MAC is one
 * SHA-512 over them, without separators). Two files with the same view are equal to sops.
 */
function macView(f: Fixture, text: string): string {
  if (f.format === 'binary') return text;
  if (f.format === 'dotenv') {
    return text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('sops_'))
      .map((l) => l.slice(l.indexOf('=') + 1).replaceAll('\\n', '\n'))
      .join('');
  }
  const out: string[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (Array.isArray(v)) for (const item of v) walk(item, path);
    else if (v !== null && typeof v === 'object')
      for (const [k, child] of Object.entries(v)) {
        if (path.length === 0 && k === 'sops') continue;
        walk(child, [...path, k]);
      }
    else if (v !== null && v !== '' && f.covered(path)) out.push(macText(v));
  };
  walk(parse(text), []);
  return out.join('');
}

/** Plaintext values of the fixture (at least 4 characters), which no error message may contain. */
function secretsOf(readAs: Fixture): string[] {
  const f = FIXTURES.find((x) => x.name === readAs.name)!;
  const plain = plainOf(f);
  if (f.format === 'binary') return plain.split('\n').filter((s) => s.length >= 4);
  if (f.format === 'dotenv')
    return plain
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.slice(l.indexOf('=') + 1))
      .filter((s) => s.length >= 4);
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
    else if (typeof v === 'string' && v.length >= 4) out.push(v);
  };
  walk(parse(plain));
  // Only what the original encrypted: values that appear as ciphertext in the encrypted file.
  const enc = read(f.name);
  return out.filter((s) => !enc.includes(s));
}

const outcomes = { decrypted: 0, refused: 0 };

async function checkDecrypt(f: Fixture, content: string, k = keys): Promise<void> {
  let out: string;
  try {
    out = await decryptFile(content, f.format, k, f.name);
  } catch (err) {
    assertClearError(err, [DecryptionError]);
    outcomes.refused++;
    for (const secret of secretsOf(f)) {
      assert.ok(
        !(err as Error).message.includes(secret),
        `the error names a secret: ${(err as Error).message}`,
      );
    }
    return;
  }
  outcomes.decrypted++;
  assert.ok(k === keys, 'decrypted with the wrong key');
  // Decrypted: the MAC held, so what it covers is what sops encrypted.
  assert.equal(macView(f, out), expectedView(f), 'decrypted a file whose MAC-covered content changed');
}

const fixture = fc.constantFrom(...FIXTURES);
const FORMATS: SopsFileFormat[] = ['yaml', 'json', 'dotenv', 'binary'];
/** A fixture's file, damaged as text or as bytes, and sometimes read as another format. */
const damaged = fixture.chain((f) =>
  fc.tuple(
    fc
      .oneof({ weight: 4, arbitrary: fc.constant(f.format) }, fc.constantFrom(...FORMATS))
      .map((format): Fixture => ({ ...f, format })),
    fc.oneof(
      edits.map((e) => mutate(read(f.name), e)),
      byteEdits.map((e) => mutateBytes(Buffer.from(read(f.name)), e).toString('utf8')),
      fc.constant(read(f.name)),
    ),
  ),
);

/** The MAC view of the fixture's plaintext in the format the file was read as. */
function expectedView(f: Fixture): string {
  const original = FIXTURES.find((x) => x.name === f.name)!;
  return macView(original, plainOf(original));
}

describe('fuzz: SOPS files', () => {
  test('damaged encrypted files: a DecryptionError without secrets, or what the MAC covers', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(damaged, ([f, content]) => checkDecrypt(f, content)),
      200,
    );
    t.diagnostic(`${outcomes.decrypted} decrypted, ${outcomes.refused} refused`);
  });

  test('the wrong key, or a damaged one, never decrypts', async (t) => {
    const damagedKey = fc.oneof(
      fc.constant(read('wrong.agekey')),
      edits.map((e) => mutate(read('age.agekey'), e)),
      fc.string({ maxLength: 80 }),
    );
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(fixture, damagedKey, async (f, key) => {
        const k = { ageIdentities: [key] };
        try {
          await decryptFile(read(f.name), f.format, k, f.name);
        } catch (err) {
          assertClearError(err, [DecryptionError]);
          return;
        }
        // A mutation that left the key line intact (a changed comment) still decrypts: that is fine.
        assert.ok(
          key.split('\n').some(
            (l) =>
              l.trim() ===
              read('age.agekey')
                .split('\n')
                .find((x) => x.startsWith('AGE-')),
          ),
          'decrypted with a key that is not the file’s',
        );
      }),
      150,
    );
    await new Promise((r) => setImmediate(r));
    if (warnings.length > 0)
      t.diagnostic(`${warnings.length} process warnings (yaml) collected, e.g. ${warnings[0]}`);
  });
});

describe('fuzz corpus: SOPS files', () => {
  const bugs = knownBugs('sops');
  for (const f of FIXTURES) {
    test(`${f.name} decrypts to its plain file and not with the wrong key`, {
      todo: bugs[f.name],
    }, async () => {
      await checkDecrypt(f, read(f.name));
      assert.equal(outcomes.decrypted > 0, true);
      await assert.rejects(decryptFile(read(f.name), f.format, wrongKeys, f.name), DecryptionError);
    });
  }
  // Regression inputs found by fuzzing: each must be refused (or decrypt to what its MAC covers).
  for (const [name, bytes] of corpusFiles('sops').filter(([n]) => n.startsWith('found-'))) {
    const format = name.split('.').at(-1) as string;
    const f = FIXTURES.find((x) => x.name.endsWith(`.${format}`) && name.includes(x.name.split('.')[0]!));
    test(name, { todo: bugs[name] }, async () => {
      assert.ok(f, `no fixture matches ${name}`);
      await checkDecrypt(f, bytes.toString('utf8'));
    });
  }
});
