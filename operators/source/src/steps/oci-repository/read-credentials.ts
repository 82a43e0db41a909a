import { Reason } from '@mooring/api';
import {
  credentialsFromDockerConfig,
  type OciReference,
  RegistryClient,
  type RegistryCredentials,
} from '@mooring/oci';
import { readSecretData, StalledError } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { need } from '../../source-run.ts';

/** The registry credentials for `target`'s host in the `spec.secretRef` dockerconfigjson, if one is set. */
async function registryCredentials(
  run: OciRepositoryRun,
  target: OciReference,
): Promise<RegistryCredentials | undefined> {
  const name = run.obj.spec.secretRef?.name;
  if (!name) return undefined;
  const data = await readSecretData(run.deps.client, run.storageRef.namespace, name, 'registry credentials');
  const config = data['.dockerconfigjson'];
  if (config === undefined) {
    throw new StalledError(
      Reason.InvalidProviderConfiguration,
      `Secret ${name} has no '.dockerconfigjson' key`,
    );
  }
  try {
    return credentialsFromDockerConfig(config, target.host);
  } catch (err) {
    throw new StalledError(Reason.InvalidProviderConfiguration, `Secret ${name}: ${(err as Error).message}`);
  }
}

/** A registry client with the object's credentials and CA (`spec.certSecretRef`), bound to `spec.timeout`. */
export async function readCredentials(run: OciRepositoryRun): Promise<undefined> {
  const { obj, timeoutMs } = run;
  const target = need(run.target, 'the parsed URL');
  const credentials = await registryCredentials(run, target);
  let caCert: string | undefined;
  if (obj.spec.certSecretRef?.name) {
    const data = await readSecretData(
      run.deps.client,
      run.storageRef.namespace,
      obj.spec.certSecretRef.name,
      'TLS',
    );
    caCert = data['ca.crt'];
  }
  run.registry = new RegistryClient({
    credentials,
    caCert,
    insecure: obj.spec.insecure ?? false,
    timeoutMs,
    signal: run.ctx.deadline(timeoutMs),
    userAgent: 'mooring-source',
  });
  return undefined;
}
