// RSA keys made ahead for sprig's generators. A chart that makes its own certificates (genCA,
// genSignedCert, genSelfSignedCert, genPrivateKey) asks for fresh keys on every render, and
// OpenSSL's prime search takes 70-550 ms for one 2048-bit key, seconds for 4096: most of such a
// render. So once a render has asked for keys of a size, the renderer keeps as many of that size
// ready as one render has used (at most MAX_READY), made on libuv's thread pool while it waits for
// its next request. A key is handed out once and then forgotten: the reserve holds no key a render
// has seen, and two renders never share one. With none ready, the key is made there and then.
// Plain JavaScript, like wasi-worker.mjs, which runs it.
import { generateKeyPair, generateKeyPairSync } from 'node:crypto';

/** Keys of one size kept ready at most: bounds the memory held and the CPU spent ahead. */
export const MAX_READY = 4;

const options = (bits) => ({
  modulusLength: bits,
  publicExponent: 0x10001,
  privateKeyEncoding: { type: 'pkcs1', format: 'der' },
});

export class RsaKeyReserve {
  /** bits → PKCS#1 DER private keys, ready to hand out. */
  #ready = new Map();
  /** bits → keys being made. */
  #making = new Map();
  /** bits → how many to keep ready: the most one render has asked for. */
  #wanted = new Map();
  /** bits → asked for since the last renderDone(). */
  #asked = new Map();
  /** Resolved when nothing is being made (for tests). */
  #settled = [];

  /** A fresh key of `bits` bits (PKCS#1 DER): a ready one if there is one, else made now. */
  take(bits) {
    this.#asked.set(bits, (this.#asked.get(bits) ?? 0) + 1);
    const ready = this.#ready.get(bits)?.shift();
    return ready ?? generateKeyPairSync('rsa', options(bits)).privateKey;
  }

  /** A render has finished: remember what it asked for, and make keys up to that while idle. */
  renderDone() {
    for (const [bits, count] of this.#asked)
      this.#wanted.set(bits, Math.min(MAX_READY, Math.max(count, this.#wanted.get(bits) ?? 0)));
    this.#asked.clear();
    for (const [bits, wanted] of this.#wanted) {
      const have = () => (this.#ready.get(bits)?.length ?? 0) + (this.#making.get(bits) ?? 0);
      while (have() < wanted) {
        this.#making.set(bits, (this.#making.get(bits) ?? 0) + 1);
        generateKeyPair('rsa', options(bits), (err, _publicKey, privateKey) => {
          this.#making.set(bits, this.#making.get(bits) - 1);
          if (!err) {
            const ready = this.#ready.get(bits) ?? [];
            ready.push(privateKey);
            this.#ready.set(bits, ready);
          }
          if (this.#idle()) for (const done of this.#settled.splice(0)) done();
        });
      }
    }
  }

  #idle() {
    return [...this.#making.values()].every((n) => n === 0);
  }

  /** Keys ready now, by size. */
  readyCounts() {
    return new Map([...this.#ready].map(([bits, keys]) => [bits, keys.length]));
  }

  /** Resolves once no key is being made. */
  settled() {
    if (this.#idle()) return Promise.resolve();
    return new Promise((done) => this.#settled.push(done));
  }
}
