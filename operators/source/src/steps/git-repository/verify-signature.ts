import { ConditionType, Reason } from '@mooring/api';
import { verifyCheckout } from '@mooring/git';
import { RetryableError, readSecretData, removeCondition, StalledError } from '@mooring/runtime';
import { type GitRepositoryRun, verifyModeOf } from '../../git-repository-run.ts';
import { need } from '../../source-run.ts';

/** The OpenPGP public keys (`*.asc`) in `spec.verify.secretRef`. */
async function verificationKeys(run: GitRepositoryRun): Promise<string[]> {
  const name = run.obj.spec.verify?.secretRef.name;
  if (!name) return [];
  const data = await readSecretData(run.deps.client, run.storageRef.namespace, name, 'verification');
  const keys = Object.entries(data)
    .filter(([k]) => k.endsWith('.asc'))
    .map(([, v]) => v);
  if (keys.length === 0) {
    throw new StalledError(Reason.VerificationError, `Secret ${name} has no OpenPGP public key (*.asc)`);
  }
  return keys;
}

/** Checks the signature `spec.verify` asks for; SourceVerified tells the outcome either way. */
export async function verifySignature(run: GitRepositoryRun): Promise<undefined> {
  const { obj, ctx } = run;
  const mode = verifyModeOf(obj);
  if (!mode) {
    ctx.status.conditions = removeCondition(ctx.status.conditions, ConditionType.SourceVerified);
    return undefined;
  }
  const checkout = need(run.checkout, 'the checkout');
  const outcome = await verifyCheckout(checkout, mode, await verificationKeys(run));
  if (!outcome.verified) {
    const message = `signature verification of revision '${checkout.revision}' failed: ${outcome.reason}`;
    ctx.setCondition(ConditionType.SourceVerified, 'False', Reason.VerificationError, message);
    throw new RetryableError(Reason.VerificationError, message);
  }
  const signatures = outcome.signatures.map((v) => `${v.object} signature with key ${v.keyId}`).join(' and ');
  ctx.setCondition(
    ConditionType.SourceVerified,
    'True',
    Reason.Succeeded,
    `verified ${signatures} of revision '${checkout.revision}'`,
  );
  return undefined;
}
