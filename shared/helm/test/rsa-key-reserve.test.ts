// The renderer's reserve of RSA keys for sprig (src/rsa-key-reserve.mjs): keys made ahead while
// idle, each handed out once, never more kept than one render used.
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { describe, it } from 'node:test';
import { MAX_READY, RsaKeyReserve } from '../src/rsa-key-reserve.mjs';

// The reserve makes keys of any size it is asked for; 1024 bits keeps the test's key generation
// short (sprig asks for 2048 and 4096, generated-certs.test.ts covers those through the renderer).
const BITS = 1024;

const modulusBits = (der: Buffer): number | undefined =>
  createPrivateKey({ key: der, format: 'der', type: 'pkcs1' }).asymmetricKeyDetails?.modulusLength;

describe('RSA key reserve', () => {
  it('makes a key on the spot when none is ready, and keeps none before a render asked', async () => {
    const reserve = new RsaKeyReserve();
    assert.equal(reserve.readyCounts().size, 0);
    assert.equal(modulusBits(reserve.take(BITS)), BITS);
    await reserve.settled();
    assert.equal(reserve.readyCounts().size, 0, 'nothing is made ahead before a render ends');
  });

  it('after a render, keeps as many ready as it used, and hands each out once', async () => {
    const reserve = new RsaKeyReserve();
    const seen = new Set<string>();
    const take = (): Buffer => {
      const key = reserve.take(BITS);
      const hex = key.toString('hex');
      assert.ok(!seen.has(hex), 'no key is handed out twice');
      seen.add(hex);
      return key;
    };
    take();
    take();
    reserve.renderDone();
    await reserve.settled();
    assert.deepEqual([...reserve.readyCounts()], [[BITS, 2]]);
    // The next render takes the two made ahead, then one more made there and then.
    for (let i = 0; i < 3; i++) assert.equal(modulusBits(take()), BITS);
    assert.deepEqual([...reserve.readyCounts()], [[BITS, 0]]);
    reserve.renderDone();
    await reserve.settled();
    assert.deepEqual([...reserve.readyCounts()], [[BITS, 3]]);
  });

  it(`never keeps more than ${MAX_READY} of a size`, async () => {
    const reserve = new RsaKeyReserve();
    for (let i = 0; i < MAX_READY + 2; i++) reserve.take(BITS);
    reserve.renderDone();
    await reserve.settled();
    assert.deepEqual([...reserve.readyCounts()], [[BITS, MAX_READY]]);
  });
});
