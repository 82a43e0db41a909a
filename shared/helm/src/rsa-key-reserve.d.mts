// Types of rsa-key-reserve.mjs (plain JavaScript: the renderer's worker thread loads it without a loader).

/** Keys of one size kept ready at most. */
export declare const MAX_READY: number;

export declare class RsaKeyReserve {
  /** A fresh key of `bits` bits (PKCS#1 DER): a ready one if there is one, else made now. */
  take(bits: number): Buffer;
  /** A render has finished: remember what it asked for, and make keys up to that while idle. */
  renderDone(): void;
  /** Keys ready now, by size. */
  readyCounts(): Map<number, number>;
  /** Resolves once no key is being made. */
  settled(): Promise<void>;
}
