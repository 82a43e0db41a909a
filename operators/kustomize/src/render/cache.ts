import { ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
import { renderKey } from './cache-key.ts';
import { defaultHelmRenderLimits, type HelmRenderSettings } from './helm-renderer.ts';
import { type Rendered, type RenderStep, renderSteps, runRender } from './pipeline.ts';
import { SizedLru } from './sized-lru.ts';

const clone = (r: Rendered): Rendered => ({ digest: r.digest, manifests: structuredClone(r.manifests) });

/** How much the renders' manifests may take, as JSON text (their parsed form is a few times that). */
export const RENDER_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Renders by their whole inputs (artifact, path, overrides, keys, variables, owner): two
 * Kustomizations with equal inputs render once, and a reconcile with nothing new renders nothing.
 * Bounded by count and by the manifests' size, least recently used out first; a failed render is
 * not kept. The owner is in the key, so every Kustomization has an entry of its own: a count
 * bound below the number of Kustomizations would evict each one before its next pass comes round
 * (at 1,000 Kustomizations and 256 entries, every forced no-op pass rendered all 1,000 again).
 */
export class RenderCache {
  readonly #entries: SizedLru<Rendered>;
  readonly #steps: readonly RenderStep<RenderInputs>[];

  constructor(maxEntries = 20_000, artifacts = new ArtifactCache(), maxBytes = RENDER_CACHE_BYTES) {
    this.#entries = new SizedLru({
      maxEntries,
      maxSize: maxBytes,
      sizeOf: (r) => JSON.stringify(r.manifests).length,
    });
    this.#steps = renderSteps(artifactSource(artifacts));
  }

  /**
   * `helm` (limits, the target's capabilities) is not part of the key: a render is reused until its
   * inputs change, as a cluster's version and APIs rarely do between revisions. `onLookup` hears
   * whether the render was found (`mooring_render_cache_requests_total`).
   */
  get(
    inputs: RenderInputs,
    signal: AbortSignal,
    helm: HelmRenderSettings = { limits: defaultHelmRenderLimits },
    onLookup?: (hit: boolean) => void,
  ): Promise<Rendered> {
    const key = renderKey(inputs);
    const cached = this.#entries.get(key);
    onLookup?.(cached !== undefined);
    if (cached) return cached.then(clone);
    const pending = runRender(this.#steps, inputs, signal, helm);
    this.#entries.set(key, pending);
    return pending.then(clone);
  }
}
