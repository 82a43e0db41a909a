import type { OCIRepository } from '@mooring/api';
import type { StoredArtifact } from '@mooring/artifact';
import type { OciDescriptor } from '@mooring/oci';

/** Layers remembered at most; the oldest is forgotten first. */
const MAX_ENTRIES = 1024;

/**
 * Which stored artifact a layer was last built into, by everything that decides the artifact's
 * bytes: the layer's digest, how it is stored (extracted or copied) and `spec.ignore`. A thousand
 * OCIRepositories of one artifact (Flux's benchmark; a fleet's per-tenant sources) then pull and
 * pack it once and copy the result. The namespace and the repository URL are in the key too: an
 * artifact is shared only between sources that read the same repository in the same namespace,
 * so a digest learnt elsewhere never opens another tenant's private layer.
 */
export class PackedLayers {
  readonly #entries = new Map<string, Pick<StoredArtifact, 'path' | 'digest'>>();

  static keyOf(obj: OCIRepository, layer: OciDescriptor): string {
    return JSON.stringify([
      obj.metadata.namespace ?? '',
      obj.spec.url,
      layer.digest,
      layer.mediaType,
      obj.spec.layerSelector?.operation ?? 'extract',
      obj.spec.ignore ?? null,
    ]);
  }

  get(key: string): Pick<StoredArtifact, 'path' | 'digest'> | undefined {
    return this.#entries.get(key);
  }

  set(key: string, artifact: Pick<StoredArtifact, 'path' | 'digest'>): void {
    this.#entries.delete(key);
    this.#entries.set(key, { path: artifact.path, digest: artifact.digest });
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
