import { ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
import { renderKey } from './cache-key.ts';
import { defaultHelmRenderLimits, type HelmRenderSettings } from './helm-renderer.ts';
import { type Rendered, type RenderStep, renderSteps, runRender } from './pipeline.ts';

const clone = (r: Rendered): Rendered => ({ digest: r.digest, manifests: structuredClone(r.manifests) });

/**
 * Renders by their whole inputs (artifact, path, overrides, keys, variables, owner): two
 * Kustomizations with equal inputs render once, and a reconcile with nothing new renders nothing.
 * Bounded, oldest out first; a failed render is not kept.
 */
export class RenderCache {
  readonly #entries = new Map<string, Promise<Rendered>>();
  readonly #max: number;
  readonly #steps: readonly RenderStep<RenderInputs>[];

  constructor(max = 256, artifacts = new ArtifactCache()) {
    this.#max = max;
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
    if (cached) {
      // Refresh its place so hot entries stay.
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached.then(clone);
    }
    const pending = runRender(this.#steps, inputs, signal, helm);
    this.#entries.set(key, pending);
    pending.catch(() => this.#entries.delete(key));
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return pending.then(clone);
  }
}
