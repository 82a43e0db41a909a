import type * as OpenPGP from 'openpgp';
import type { CheckoutResult, SignedPayload } from './git-client.ts';

/** A signature that checked out: who made it. */
export interface VerifiedSignature {
  verified: true;
  /** The 16-hex key ID of the (sub)key that signed. */
  keyId: string;
  /** The fingerprint of the trusted primary key the signing key belongs to. */
  fingerprint: string;
}

/** Why a signature did not verify. */
export interface FailedVerification {
  verified: false;
  reason: string;
}

export type SignatureVerification = VerifiedSignature | FailedVerification;

/** Verifies a detached OpenPGP signature over `payload` against the trusted armored public keys. */
export async function verifySignature(
  signed: SignedPayload,
  armoredPublicKeys: string[],
): Promise<SignatureVerification> {
  if (!signed.signature.includes('-----BEGIN PGP SIGNATURE-----'))
    return { verified: false, reason: 'the signature is not an OpenPGP signature' };
  // openpgp (0.8 MB) is loaded when a signature is checked, not with the operator.
  const openpgp = await import('openpgp');
  let keys: OpenPGP.PublicKey[];
  try {
    keys = (
      await Promise.all(armoredPublicKeys.map((armoredKeys) => openpgp.readKeys({ armoredKeys })))
    ).flat();
  } catch (err) {
    return { verified: false, reason: `a trusted public key could not be read (${errorText(err)})` };
  }
  if (keys.length === 0) return { verified: false, reason: 'no trusted public keys were given' };
  let signature: OpenPGP.Signature;
  try {
    signature = await openpgp.readSignature({ armoredSignature: signed.signature });
  } catch (err) {
    return { verified: false, reason: `the signature could not be parsed (${errorText(err)})` };
  }
  const message = await openpgp.createMessage({ binary: Buffer.from(signed.payload, 'utf8') });
  const signerIds = signature.getSigningKeyIDs().map((id) => id.toHex());
  const result = await openpgp.verify({ message, signature, verificationKeys: keys, expectSigned: false });
  for (const sig of result.signatures) {
    const keyId = sig.keyID.toHex();
    const owner = keys.find((k) => k.getKeys(sig.keyID).length > 0);
    if (!owner) continue;
    try {
      await sig.verified;
      return { verified: true, keyId, fingerprint: owner.getFingerprint() };
    } catch (err) {
      return { verified: false, reason: `the signature by key ${keyId} is invalid (${errorText(err)})` };
    }
  }
  return {
    verified: false,
    reason: `the signature was made by key ${signerIds.join(', ') || 'unknown'}, which is not among the trusted keys`,
  };
}

/** Flux's GitRepository `spec.verify.mode`; `head` is the deprecated spelling of `HEAD`. */
export type VerificationMode = 'HEAD' | 'head' | 'Tag' | 'TagAndHEAD';

/** The outcome of verifying a checkout: every signature checked, or the first reason it failed. */
export type CheckoutVerification =
  | { verified: true; signatures: Array<VerifiedSignature & { object: 'commit' | 'tag' }> }
  | FailedVerification;

/** Verifies a checkout's commit and/or tag signatures as the GitRepository verification mode asks. */
export async function verifyCheckout(
  result: CheckoutResult,
  mode: VerificationMode,
  armoredPublicKeys: string[],
): Promise<CheckoutVerification> {
  const wantTag = mode === 'Tag' || mode === 'TagAndHEAD';
  const wantHead = mode === 'HEAD' || mode === 'head' || mode === 'TagAndHEAD';
  const signatures: Array<VerifiedSignature & { object: 'commit' | 'tag' }> = [];
  if (wantTag) {
    if (!result.refName?.startsWith('refs/tags/'))
      return {
        verified: false,
        reason: `verification mode ${mode} needs a tag reference, but revision ${result.revision} is not a tag`,
      };
    const tag = result.refName.slice('refs/tags/'.length);
    if (!result.tagSignature) return { verified: false, reason: `tag '${tag}' is not signed` };
    const outcome = await verifySignature(result.tagSignature, armoredPublicKeys);
    if (!outcome.verified) return { verified: false, reason: `tag '${tag}': ${outcome.reason}` };
    signatures.push({ ...outcome, object: 'tag' });
  }
  if (wantHead) {
    if (!result.commitSignature) return { verified: false, reason: `commit ${result.commit} is not signed` };
    const outcome = await verifySignature(result.commitSignature, armoredPublicKeys);
    if (!outcome.verified) return { verified: false, reason: `commit ${result.commit}: ${outcome.reason}` };
    signatures.push({ ...outcome, object: 'commit' });
  }
  return { verified: true, signatures };
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/[.\s]+$/, '');
}
