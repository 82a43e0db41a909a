import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { commitInfo, commitSignature, tagSignature, withCommitSignature } from '../src/signed-object.ts';

const SIG = '-----BEGIN PGP SIGNATURE-----\n\nwnUEARYKAB0WIQ\n=abcd\n-----END PGP SIGNATURE-----\n';
const UNSIGNED = `tree ${'1'.repeat(40)}\nparent ${'2'.repeat(40)}\nauthor A U <a@x> 1700000000 +0100\ncommitter A U <a@x> 1700000000 +0100\n\nsubject line\n\nbody\n`;

describe('signed git objects', () => {
  test('withCommitSignature and commitSignature round-trip like git lays them out', () => {
    const signed = withCommitSignature(UNSIGNED, SIG);
    assert.match(signed, /\ncommitter [^\n]+\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n wnUEARYKAB0WIQ\n/);
    assert.deepEqual(commitSignature(signed), { signature: SIG, payload: UNSIGNED });
    assert.equal(commitSignature(UNSIGNED), undefined);
  });

  test('tagSignature splits the signature off the message', () => {
    const payload = `object ${'1'.repeat(40)}\ntype commit\ntag v1\ntagger T <t@x> 1 +0000\n\nmsg\n`;
    assert.deepEqual(tagSignature(payload + SIG), { signature: SIG, payload });
    assert.equal(tagSignature(payload), undefined);
  });

  test('commitInfo reads subject and author', () => {
    assert.deepEqual(commitInfo('c', UNSIGNED), {
      commit: 'c',
      subject: 'subject line',
      author: { name: 'A U', email: 'a@x', date: '2023-11-14T22:13:20.000Z' },
    });
  });
});
