import type { Manifest } from '../apply/object-policy.ts';
import { ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
import { renderKey } from './cache-key.ts';
import { defaultHelmRenderLimits, type HelmRenderSettings } from './helm-renderer.ts';
import {
  buildSteps,
  finishSteps,
  type Rendered,
  type RenderStep,
  rendered,
  runRenderSteps,
} from './pipeline.ts';
import { SizedLru } from './sized-lru.ts';

/**
 * A render as kept: its manifests as JSON text, which takes about a third of their parsed form
 * (at 1,000 Kustomizations the parsed renders and builds were 5.3 MB of a converged heap). Every
 * use gets its own copy anyway, so parsing it replaces the structured clone it needed before; JSON
 * is what the manifests become on their way to the API server, so nothing they carry is lost.
 */
interface Kept {
  digest: string;
  json: string;
}
const keep = (r: Rendered): Kept => ({ digest: r.digest, json: JSON.stringify(r.manifests) });
const revive = (k: Kept): Rendered => ({ digest: k.digest, manifests: JSON.parse(k.json) as Manifest[] });

/** How much the renders' manifests may take, as JSON text (their parsed form is a few times that). */
export const RENDER_CACHE_BYTES = 64 * 1024 * 1024;

/** A build shared by renders that no caller is waiting for any more still runs for the others. */
const NEVER_ABORTED = new AbortController().signal;

/** Resolves as `work`, or rejects when `signal` aborts first (the work itself goes on). */
function until<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * What a build depends on: the artifact's content and revision (not its URL: N sources of one
 * digest build once), the path, the overrides, the keys and who a chart's lookup reads as. Not the
 * owner or its postBuild variables, which only the finishing steps use.
 */
function buildKey(inputs: RenderInputs): string {
  const { artifact, path, overrides, decryption, reader } = inputs;
  return renderKey({
    artifact: { digest: artifact.digest ?? artifact.url, revision: artifact.revision },
    path,
    overrides,
    decryption,
    reader,
  });
}

/**
 * Renders in two levels. Builds are kept by {@link buildKey}: a thousand Kustomizations on sources
 * of one digest (Flux's benchmark) build once and only substitute and label a thousand times.
 * Renders are kept by their whole inputs (artifact, path, overrides, keys, variables, owner), so
 * a reconcile with nothing new renders nothing. Both are bounded by count and by the manifests'
 * size, least recently used out first; a failure is not kept. The owner is in the render's key, so
 * every Kustomization has an entry of its own: a count bound below the number of Kustomizations
 * would evict each one before its next pass comes round (at 1,000 Kustomizations and 256 entries,
 * every forced no-op pass rendered all 1,000 again).
 */
export class RenderCache {
  readonly #entries: SizedLru<Kept>;
  readonly #builds: SizedLru<string>;
  readonly #buildSteps: readonly RenderStep<RenderInputs>[];

  constructor(maxEntries = 20_000, artifacts = new ArtifactCache(), maxBytes = RENDER_CACHE_BYTES) {
    this.#entries = new SizedLru({ maxEntries, maxSize: maxBytes, sizeOf: (k) => k.json.length });
    this.#builds = new SizedLru({ maxEntries: 1024, maxSize: maxBytes / 4, sizeOf: (json) => json.length });
    this.#buildSteps = buildSteps(artifactSource(artifacts));
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
    if (cached) return cached.then(revive);
    const pending = this.#render(inputs, signal, helm).then(keep);
    this.#entries.set(key, pending);
    return pending.then(revive);
  }

  async #render(inputs: RenderInputs, signal: AbortSignal, helm: HelmRenderSettings): Promise<Rendered> {
    const built = await until(this.#build(inputs, helm), signal);
    const finished = await runRenderSteps(finishSteps, inputs, signal, helm, JSON.parse(built) as Manifest[]);
    return rendered(finished);
  }

  /** The shared build runs to its end whoever stops waiting; its own limits (fetch, Helm) bound it. */
  #build(inputs: RenderInputs, helm: HelmRenderSettings): Promise<string> {
    const key = buildKey(inputs);
    const cached = this.#builds.get(key);
    if (cached) return cached;
    const pending = runRenderSteps(this.#buildSteps, inputs, NEVER_ABORTED, helm).then((m) =>
      JSON.stringify(m),
    );
    this.#builds.set(key, pending);
    return pending;
  }
}
