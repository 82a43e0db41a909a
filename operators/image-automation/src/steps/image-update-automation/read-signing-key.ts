import { Reason } from '@mooring/api';
import { readSecretData, StalledError } from '@mooring/runtime';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';

/** The armored GPG key (and passphrase) `git.commit.signingKey` names, when commits are signed. */
export async function readSigningKey(run: ImageUpdateAutomationRun): Promise<undefined> {
  const { namespace } = run;
  const key = run.obj.spec.git.commit.signingKey;
  if (!key) {
    run.signing = {};
    return undefined;
  }
  if ((key.type ?? 'gpg') !== 'gpg') {
    throw new StalledError(
      Reason.InvalidSourceConfiguration,
      `signing key type ${key.type} is not supported yet; use gpg`,
    );
  }
  const data = await readSecretData(run.deps.client, namespace, key.secretRef.name, 'signing key');
  const armored = data['git.asc'];
  if (!armored) {
    throw new StalledError(
      Reason.InvalidSourceConfiguration,
      `Secret ${namespace}/${key.secretRef.name} has no 'git.asc' key`,
    );
  }
  run.signing = { signingKey: armored, ...(data.passphrase ? { passphrase: data.passphrase } : {}) };
  return undefined;
}
