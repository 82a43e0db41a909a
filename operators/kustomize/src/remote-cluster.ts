import { createHash } from 'node:crypto';
import type { Kustomization } from '@mooring/api';
import {
  HttpsTransport,
  KubeClient,
  parseUntrustedKubeConfig,
  RetryableError,
  readObjectData,
  StalledError,
  UntrustedKubeConfigError,
} from '@mooring/runtime';

const UNSUPPORTED = 'UnsupportedConfiguration';

/** API clients for `spec.kubeConfig`, one per Kustomization, rebuilt when its kubeconfig changes. */
export class RemoteClusters {
  readonly #clients = new Map<string, { fingerprint: string; client: KubeClient }>();

  /** The client for the cluster the Kustomization applies to, or undefined for this one. */
  async clientFor(
    local: KubeClient,
    obj: { metadata: Kustomization['metadata']; spec: Pick<Kustomization['spec'], 'kubeConfig'> },
  ): Promise<KubeClient | undefined> {
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
    // Parsed into an allow-listed shape before any library sees it: a tenant's kubeconfig must
    // not make the operator read its own files (token-file, certificate paths) or run a program.
    let kc: ReturnType<typeof parseUntrustedKubeConfig>;
    try {
      kc = parseUntrustedKubeConfig(text);
    } catch (err) {
      if (!(err instanceof UntrustedKubeConfigError)) throw err;
      throw new StalledError(UNSUPPORTED, `the kubeconfig in Secret ${ref.secretRef.name}: ${err.message}`);
    }
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
