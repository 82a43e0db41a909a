import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Artifact,
  DECRYPT_ANNOTATION,
  DECRYPT_DISABLED,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
} from '@mooring/api';
import { ArtifactNotFoundError, DigestMismatchError, fetchArtifact } from '@mooring/artifact';
import {
  build,
  type ConfinedFs,
  createConfinedFs,
  type KustomizationOverrides,
  KustomizeError,
  toYAML,
} from '@mooring/kustomize';
import { RetryableError, StalledError, WaitingError } from '@mooring/runtime';
import type { Manifest } from './apply/object-policy.ts';
import { buildDecrypting, type DecryptionKeys, FileDecryptionError, isSopsEncrypted } from './sops/index.ts';
import { type SubstituteOptions, substituteVariables } from './substitute.ts';

/** Everything a render depends on besides the artifact itself; equal inputs give equal output. */
export interface RenderInputs {
  artifact: Artifact;
  path: string;
  overrides: KustomizationOverrides;
  buildMetadata?: string[];
  decryption?: DecryptionKeys;
  substitute?: { vars: Record<string, string>; options: SubstituteOptions };
  owner: { name: string; namespace: string };
}

export interface Rendered {
  manifests: Manifest[];
  /** sha256 of the rendered YAML, for `status.history`. */
  digest: string;
}

/** Failures of this step carry Flux's reasons, so users and alerts read them alike. */
export const ARTIFACT_FAILED = 'ArtifactFailed';
export const BUILD_FAILED = 'BuildFailed';

/** The render inputs as a cache key; secrets are hashed, never kept. */
export function renderKey(inputs: RenderInputs): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        inputs.artifact.digest,
        inputs.path,
        inputs.overrides,
        inputs.buildMetadata ?? [],
        inputs.decryption?.ageIdentities ?? [],
        inputs.substitute ?? null,
        inputs.owner,
      ]),
    )
    .digest('hex');
}

/**
 * Renders by (artifact digest, path, options): two Kustomizations on the same revision and path
 * render once, and a reconcile with nothing new renders nothing. Bounded, oldest out first.
 */
export class RenderCache {
  readonly #entries = new Map<string, Promise<Rendered>>();
  readonly #max: number;
  readonly #artifacts: ArtifactCache;
  hits = 0;
  misses = 0;

  constructor(max = 256, artifacts = new ArtifactCache()) {
    this.#max = max;
    this.#artifacts = artifacts;
  }

  get(inputs: RenderInputs, signal: AbortSignal): Promise<Rendered> {
    const key = renderKey(inputs);
    const cached = this.#entries.get(key);
    if (cached) {
      this.hits++;
      // Refresh its place so hot entries stay.
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached.then(clone);
    }
    this.misses++;
    const pending = render(inputs, signal, this.#artifacts);
    this.#entries.set(key, pending);
    pending.catch(() => this.#entries.delete(key));
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return pending.then(clone);
  }
}

const clone = (r: Rendered): Rendered => ({ digest: r.digest, manifests: structuredClone(r.manifests) });

/**
 * Extracted artifacts by digest, shared by every render of the same revision (N Kustomizations on
 * one source fetch it once). Content-addressed, so an entry never goes stale; the oldest are
 * removed from disk beyond `max`.
 */
export class ArtifactCache {
  readonly #entries = new Map<string, Promise<{ dir: string; cleanup(): Promise<void> }>>();
  readonly #max: number;

  constructor(max = 8) {
    this.#max = max;
  }

  get(artifact: Artifact, signal: AbortSignal): Promise<{ dir: string }> {
    const key = artifact.digest ?? artifact.url;
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = fetchArtifact({ url: artifact.url, digest: artifact.digest ?? '', timeoutMs: 60_000, signal });
      this.#entries.set(key, entry);
      entry.catch(() => this.#entries.delete(key));
      while (this.#entries.size > this.#max) {
        const [oldest, value] = this.#entries.entries().next().value!;
        this.#entries.delete(oldest);
        void value.then((v) => v.cleanup()).catch(() => {});
      }
    }
    return entry;
  }

  async clear(): Promise<void> {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(all.map((e) => e.then((v) => v.cleanup()).catch(() => {})));
  }
}

/** Fetches (or reuses) the verified, extracted artifact, builds it, decrypts and substitutes. */
export async function render(
  inputs: RenderInputs,
  signal: AbortSignal,
  artifacts?: ArtifactCache,
): Promise<Rendered> {
  const { artifact } = inputs;
  // Decryption happens as the build reads, never in the tree, so decrypting renders share it too.
  const shared = artifacts !== undefined;
  let fetched: { dir: string; cleanup?: () => Promise<void> };
  try {
    fetched = shared
      ? await artifacts.get(artifact, signal)
      : await fetchArtifact({ url: artifact.url, digest: artifact.digest ?? '', timeoutMs: 60_000, signal });
  } catch (err) {
    if (err instanceof ArtifactNotFoundError) {
      throw new WaitingError(
        ARTIFACT_FAILED,
        `artifact of revision '${artifact.revision}' is not in storage yet`,
        5_000,
      );
    }
    if (err instanceof DigestMismatchError) throw new RetryableError(ARTIFACT_FAILED, err.message);
    throw new RetryableError(
      ARTIFACT_FAILED,
      `fetching artifact of revision '${artifact.revision}': ${(err as Error).message}`,
    );
  }
  try {
    const root = fetched.dir;
    const path = (inputs.path || './').replace(/^\.\/?/, '').replace(/\/+$/, '');
    try {
      const st = await lstat(join(root, path));
      if (!st.isDirectory()) throw new Error('not a directory');
    } catch {
      throw new StalledError(
        ARTIFACT_FAILED,
        `path '${inputs.path}' does not exist in revision '${artifact.revision}'`,
      );
    }
    const run = (fs: ConfinedFs) =>
      build(fs, path, { generateWhenMissing: true, loadRestrictions: 'none', overrides: inputs.overrides });
    let resources: Awaited<ReturnType<typeof build>>;
    try {
      // Only the files the build reads are decrypted, so a broken one elsewhere harms no one.
      resources = inputs.decryption
        ? await buildDecrypting(() => createConfinedFs(root), inputs.decryption, run)
        : await run(createConfinedFs(root));
    } catch (err) {
      if (err instanceof FileDecryptionError) throw new RetryableError(BUILD_FAILED, err.message);
      if (err instanceof KustomizeError)
        throw new RetryableError(BUILD_FAILED, `kustomize build failed: ${err.message}`);
      throw err;
    }
    const manifests: Manifest[] = [];
    for (const resource of resources) {
      let obj = resource.object as unknown as Manifest;
      const name = `${obj.kind}/${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
      // Encrypted files the build read were decrypted as it read them; what is still encrypted was not meant to be.
      if (isSopsEncrypted(obj) && obj.metadata?.annotations?.[DECRYPT_ANNOTATION] !== DECRYPT_DISABLED) {
        throw new RetryableError(
          BUILD_FAILED,
          inputs.decryption
            ? `${name} is still SOPS-encrypted after decryption: refusing to apply ciphertext`
            : `${name} is SOPS-encrypted but spec.decryption is not set: refusing to apply ciphertext`,
        );
      }
      if (inputs.substitute) {
        try {
          obj = substituteVariables(obj, inputs.substitute.vars, inputs.substitute.options, name) as Manifest;
        } catch (err) {
          throw new RetryableError(BUILD_FAILED, `post-build substitution failed: ${(err as Error).message}`);
        }
      }
      obj.metadata.labels = {
        ...obj.metadata.labels,
        [KUSTOMIZE_NAME_LABEL]: inputs.owner.name,
        [KUSTOMIZE_NAMESPACE_LABEL]: inputs.owner.namespace,
      };
      manifests.push(obj);
    }
    const yaml = toYAML(manifests.map((object) => ({ object: object as never, previousIds: [] })));
    return { manifests, digest: `sha256:${createHash('sha256').update(yaml).digest('hex')}` };
  } finally {
    if (!shared) await fetched.cleanup?.();
  }
}

/** The Kustomization's fields that change what kustomize builds. */
export function overridesOf(obj: Kustomization): KustomizationOverrides {
  const s = obj.spec;
  return {
    targetNamespace: s.targetNamespace,
    namePrefix: s.namePrefix,
    nameSuffix: s.nameSuffix,
    patches: s.patches as KustomizationOverrides['patches'],
    images: s.images as KustomizationOverrides['images'],
    components: s.components,
    ignoreMissingComponents: s.ignoreMissingComponents,
    buildMetadata: s.buildMetadata,
    commonMetadata: s.commonMetadata,
  };
}
