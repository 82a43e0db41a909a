import { readHelmCredentials } from '../../helm/credentials.ts';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';

/** `spec.secretRef` and `spec.certSecretRef`, read and checked for their shape. */
export async function readCredentials(run: HelmRepositoryRun): Promise<undefined> {
  run.credentials = await readHelmCredentials(run.deps.client, run.storageRef.namespace, run.obj.spec);
  return undefined;
}
