import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactText, redactUrl, secretsOf } from '../src/redact.ts';

describe('redaction', () => {
  test('redactUrl drops http credentials and an ssh password but keeps the ssh user', () => {
    assert.equal(redactUrl('https://bob:s3cr3t-pw@git.example/r.git'), 'https://git.example/r.git');
    assert.equal(redactUrl('ssh://git:pw@git.example/r.git'), 'ssh://git@git.example/r.git');
    assert.equal(redactUrl('https://git.example/r.git'), 'https://git.example/r.git');
  });

  test('redactText removes URL userinfo and every known secret form', () => {
    const auth = { username: 'bob', password: 'p@ss word-123', bearerToken: 'tok-abcdef' };
    const basic = Buffer.from('bob:p@ss word-123').toString('base64');
    const text = `fatal: https://bob:p%40ss%20word-123@h/r.git said p@ss word-123 / tok-abcdef / ${basic}`;
    const out = redactText(text, secretsOf(auth));
    for (const s of ['p@ss word-123', 'p%40ss%20word-123', 'tok-abcdef', basic])
      assert.ok(!out.includes(s), out);
    assert.match(out, /https:\/\/h\/r\.git/);
  });
});
