import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hashFile, parseSha256Digest } from './digest.ts';
import { UnsupportedDigestError } from './errors.ts';

describe('parseSha256Digest', () => {
  const hex = 'ab'.repeat(32);
  it('returns the hex of a sha256 digest', () => {
    assert.equal(parseSha256Digest(`sha256:${hex}`), hex);
  });
  const rejected: [string, RegExp][] = [
    [`sha512:${'a'.repeat(128)}`, /unsupported artifact digest algorithm "sha512"/],
    [`blake3:${hex}`, /unsupported .*"blake3"/],
    [hex, /unsupported .*"\(none\)"/],
    [`sha256:${hex.toUpperCase()}`, /malformed artifact digest/],
    [`sha256:${hex}0`, /malformed/],
    ['sha256:', /malformed/],
    [`sha256:${hex}\n`, /malformed/],
  ];
  for (const [digest, message] of rejected) {
    it(`rejects ${JSON.stringify(digest.slice(0, 20))}…`, () => {
      assert.throws(
        () => parseSha256Digest(digest),
        (err: Error) => {
          assert.ok(err instanceof UnsupportedDigestError);
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }
});

describe('hashFile', () => {
  it('hashes and sizes a file', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'mooring-digest-test-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const body = Buffer.alloc(200_000, 7);
    await writeFile(join(dir, 'f'), body);
    const hex = createHash('sha256').update(body).digest('hex');
    assert.deepEqual(await hashFile(join(dir, 'f')), { digest: `sha256:${hex}`, hex, size: 200_000 });
  });
});
