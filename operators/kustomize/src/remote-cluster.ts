import { createHash } from 'node:crypto';
import type { Kustomization } from '@mooring/api';
import {
  HttpsTransport,
  KubeClient,
  kubeConfigFromString,
  RetryableError,
  readObjectData,
  StalledError,
} from '@mooring/runtime';

type KubeConfig = ReturnType<typeof kubeConfigFromString>;

const UNSUPPORTED = 'UnsupportedConfiguration';

/**
 * Checks a tenant-supplied kubeconfig before anything connects with it: credentials must be inline.
 * An exec plugin or auth provider would run a program inside the operator, and file paths would
 * read the operator's own files (Flux's CVE-2022-24817 and CVE-2022-24877 classes).
 */
function refuseUnsafe(kc: KubeConfig, secret: string): void {
  for (const user of kc.getUsers()) {
    if (user.exec)
      throw new StalledError(
        UNSUPPORTED,
        `the kubeconfig in Secret ${secret} uses an exec credential plugin, which Mooring never runs`,
      );
    if (user.authProvider)
      throw new StalledError(
        UNSUPPORTED,
        `the kubeconfig in Secret ${secret} uses an auth provider, which Mooring does not run`,
      );
    if (user.certFile || user.keyFile) {
      throw new StalledError(
        UNSUPPORTED,
        `the kubeconfig in Secret ${secret} points at certificate files; inline them (client-certificate-data, client-key-data)`,
      );
    }
  }
  for (const cluster of kc.getClusters()) {
    if (cluster.caFile) {
      throw new StalledError(
        UNSUPPORTED,
        `the kubeconfig in Secret ${secret} points at a CA file; inline it (certificate-authority-data)`,
      );
    }
  }
}

/** API clients for `spec.kubeConfig`, one per Kustomization, rebuilt when its kubeconfig changes. */
export class RemoteClusters {
  readonly #clients = new Map<string, { fingerprint: string; client: KubeClient }>();

  /** The client for the cluster the Kustomization applies to, or undefined for this one. */
  async clientFor(local: KubeClient, obj: Kustomization): Promise<KubeClient | undefined> {
    const ref = obj.spec.kubeConfig;
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (!ref) {
      this.forget(key);
      return undefined;
    }
    if (!ref.secretRef) {
      throw new StalledError(
        UNSUPPORTED,
        'kubeConfig.configMapRef (workload identity) is not supported yet; use secretRef',
      );
    }
    const namespace = obj.metadata.namespace ?? 'default';
    const data = await readObjectData(local, 'Secret', namespace, ref.secretRef.name);
    if (!data)
      throw new RetryableError(
        'KubeConfigNotFound',
        `kubeConfig Secret ${namespace}/${ref.secretRef.name} not found`,
      );
    const text = ref.secretRef.key ? data[ref.secretRef.key] : (data.value ?? data['value.yaml']);
    if (!text) {
      throw new StalledError(
        UNSUPPORTED,
        `Secret ${ref.secretRef.name} has no '${ref.secretRef.key ?? 'value'}' key with a kubeconfig`,
      );
    }
    const fingerprint = createHash('sha256').update(text).digest('hex');
    const cached = this.#clients.get(key);
    if (cached?.fingerprint === fingerprint) return cached.client;
    let kc: KubeConfig;
    try {
      kc = kubeConfigFromString(text);
    } catch (err) {
      throw new StalledError(
        UNSUPPORTED,
        `the kubeconfig in Secret ${ref.secretRef.name} does not parse: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    refuseUnsafe(kc, ref.secretRef.name);
    const client = new KubeClient(await HttpsTransport.create(kc), { userAgent: 'mooring-kustomize' });
    this.forget(key);
    this.#clients.set(key, { fingerprint, client });
    return client;
  }

  forget(key: string): void {
    this.#clients.get(key)?.client.close();
    this.#clients.delete(key);
  }
}
