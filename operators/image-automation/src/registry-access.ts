import type { ImageRepository } from '@mooring/api';
import {
  credentialsFromDockerConfig,
  type OciReference,
  RegistryAuthError,
  RegistryClient,
  type RegistryClientOptions,
  RegistryError,
  RegistryNotFoundError,
} from '@mooring/oci';
import { type KubeClient, RetryableError, readSecretData, StalledError } from '@mooring/runtime';

/**
 * A RegistryClient for an ImageRepository: `.dockerconfigjson` credentials from `secretRef`, CA and
 * client certificate from `certSecretRef`, plain HTTP when `insecure`. ImagePolicy digest lookups
 * use the same access as the scan.
 */
export async function registryClientFor(
  client: KubeClient,
  repo: ImageRepository,
  ref: OciReference,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<RegistryClient> {
  const namespace = repo.metadata.namespace ?? 'default';
  const options: RegistryClientOptions = { timeoutMs, signal, insecure: repo.spec.insecure === true };
  if (repo.spec.secretRef?.name) {
    const name = repo.spec.secretRef.name;
    const data = await readSecretData(client, namespace, name, 'registry credentials');
    const json = data['.dockerconfigjson'];
    if (json === undefined) {
      throw new StalledError('InvalidSecret', `Secret ${namespace}/${name} has no '.dockerconfigjson' key`);
    }
    try {
      options.credentials = credentialsFromDockerConfig(json, ref.host);
    } catch (err) {
      // The library's messages never quote the document; add which Secret it was.
      throw new StalledError('InvalidSecret', `Secret ${namespace}/${name}: ${(err as Error).message}`);
    }
  }
  if (repo.spec.certSecretRef?.name) {
    const data = await readSecretData(client, namespace, repo.spec.certSecretRef.name, 'TLS');
    if (data['ca.crt']) options.caCert = data['ca.crt'];
    if (data['tls.crt'] && data['tls.key']) {
      options.clientCert = data['tls.crt'];
      options.clientKey = data['tls.key'];
    }
  }
  return new RegistryClient(options);
}

/** Maps a registry failure to the reconcile error Flux reports for it; messages come sanitised from @mooring/oci. */
export function registryFailure(err: unknown): Error {
  if (err instanceof StalledError || err instanceof RetryableError) return err;
  const message = (err as Error).message.replace(/\.$/, '');
  if (err instanceof RegistryAuthError) return new RetryableError('AuthenticationFailed', message);
  if (err instanceof RegistryNotFoundError) return new RetryableError('ReadOperationFailed', message);
  if (err instanceof RegistryError) return new RetryableError('ReadOperationFailed', message);
  return new RetryableError('ReadOperationFailed', `registry request failed: ${message}`);
}
