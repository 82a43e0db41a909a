import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DecryptionError } from './errors.ts';
import { readMetadata, unflattenDotenvMetadata } from './metadata.ts';

const base = {
  age: [{ recipient: 'age1x', enc: '-----BEGIN AGE ENCRYPTED FILE-----\n...' }],
  lastmodified: '2026-01-02T03:04:05Z',
  mac: 'ENC[AES256_GCM,data:AA==,iv:AA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]',
  version: '3.11.0',
};

test('readMetadata defaults to the _unencrypted suffix and keeps one rule', () => {
  assert.equal(readMetadata(base, 'f').unencryptedSuffix, '_unencrypted');
  const m = readMetadata({ ...base, encrypted_regex: '^data$', mac_only_encrypted: true }, 'f');
  assert.equal(m.encryptedRegex, '^data$');
  assert.equal(m.unencryptedSuffix, undefined);
  assert.equal(m.macOnlyEncrypted, true);
});

test('readMetadata authenticates the MAC with lastmodified as sops re-formats it', () => {
  assert.equal(readMetadata(base, 'f').macAad, '2026-01-02T03:04:05Z');
  assert.equal(
    readMetadata({ ...base, lastmodified: '2026-01-02T03:04:05.123+00:00' }, 'f').macAad,
    '2026-01-02T03:04:05Z',
  );
  assert.equal(
    readMetadata({ ...base, lastmodified: '2026-01-02T03:04:05+02:00' }, 'f').macAad,
    '2026-01-02T03:04:05+02:00',
  );
});

test('readMetadata refuses what it cannot check, naming the file', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...base, age: [], pgp: [{ fp: 'X' }] }, /^f has no age recipients/],
    [{ ...base, mac: '' }, /^f has no sops MAC/],
    [{ ...base, lastmodified: 'yesterday' }, /lastmodified/],
    [{ ...base, key_groups: [] }, /key groups/],
    [{ ...base, encrypted_comment_regex: 'sops' }, /comment regex/],
    [{ ...base, encrypted_regex: 'a', unencrypted_suffix: '_u' }, /more than one/],
  ];
  for (const [raw, message] of cases) {
    assert.throws(
      () => readMetadata(raw, 'f'),
      (err: unknown) => err instanceof DecryptionError && message.test(err.message),
    );
  }
  assert.throws(() => readMetadata(undefined, 'f'), /f has no sops metadata/);
});

test('unflattenDotenvMetadata rebuilds the age stanzas of a dotenv file', () => {
  const raw = unflattenDotenvMetadata({
    age__list_0__map_recipient: 'age1x',
    age__list_0__map_enc: 'line1\\nline2',
    mac: 'm',
    mac_only_encrypted: 'true',
  });
  assert.deepEqual(raw.age, [{ recipient: 'age1x', enc: 'line1\nline2' }]);
  assert.equal(raw.mac_only_encrypted, 'true');
});
