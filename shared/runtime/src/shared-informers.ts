import { Informer, type InformerOptions } from './informer.ts';
import type { KubeClient } from './kube-client.ts';
import { type KubeObject, withoutManagedFields } from './kube-object.ts';

/** What a controller holds of an informer: the cache to read, and its own start and stop. */
export interface InformerLease<T extends KubeObject = KubeObject> {
  readonly informer: Informer<T>;
  /** Starts the informer unless another holder has; resolves once its cache has synced. */
  start(): Promise<void>;
  /** Lets go; the informer stops when its last holder has let go. */
  stop(): Promise<void>;
}

/** Options that make informers the same; what the cache keeps is always the same (no managedFields). */
export type SharedInformerOptions = Omit<InformerOptions, 'transform'>;

interface Entry {
  informer: Informer<KubeObject>;
  holders: number;
}

/**
 * One informer per kind, namespace and label selector for every controller in a process, as
 * controller-runtime's shared cache gives each Go manager. Without it each controller that
 * watched a kind kept its own copy: in the all-in-one process the Kustomization cache was held three
 * times (the Kustomization, KustomizationSet and HelmRelease controllers) and OCIRepository four,
 * each copy fed by its own watch. Holders read the same objects, so none may change them (the
 * controllers clone what they write). The objects are kept without their managedFields, which no
 * controller reads from its cache and which were about half of a cached Kustomization's bytes.
 */
export class SharedInformers {
  readonly #client: KubeClient;
  readonly #entries = new Map<string, Entry>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** A lease on the informer for `options`, made by the first caller that asks for them. */
  lease<T extends KubeObject>(options: SharedInformerOptions): InformerLease<T> {
    const key = sharingKey(options);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = {
        informer: new Informer<KubeObject>(this.#client, { ...options, transform: withoutManagedFields }),
        holders: 0,
      };
      this.#entries.set(key, entry);
    }
    const held = entry;
    let holding = false;
    return {
      informer: held.informer as unknown as Informer<T>,
      start: () => {
        if (!holding) {
          holding = true;
          held.holders++;
        }
        return held.informer.start();
      },
      stop: async () => {
        if (!holding) return;
        holding = false;
        if (--held.holders === 0) await held.informer.stop();
      },
    };
  }

  /** How many informers there are: one per distinct kind, namespace and selector asked for. */
  get size(): number {
    return this.#entries.size;
  }
}

/** Everything but the error callback (each holder's own log line) and the clock decides what an informer does. */
function sharingKey(o: SharedInformerOptions): string {
  return JSON.stringify([
    o.apiVersion,
    o.kind,
    o.namespace ?? '',
    o.labelSelector ?? '',
    o.watchTimeoutSeconds,
    o.relistIntervalMs,
    o.stallTimeoutMs,
    o.initialBackoffMs,
    o.maxBackoffMs,
  ]);
}
