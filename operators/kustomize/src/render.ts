import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
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
  createConfinedFs,
  type KustomizationOverrides,
  KustomizeError,
  toYAML,
} from '@mooring/kustomize';
import { RetryableError, StalledError, WaitingError } from '@mooring/runtime';
import { parse as parseYaml } from 'yaml';
import type { Manifest } from './apply/object-policy.ts';
import { type DecryptionKeys, decryptFile, isSopsEncrypted } from './sops/index.ts';
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
  // Decryption rewrites generator inputs in place, so it needs a private copy of the tree.
  const shared = artifacts && !inputs.decryption;
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
    if (inputs.decryption) await decryptTree(root, inputs.decryption);
    let resources: Awaited<ReturnType<typeof build>>;
    try {
      resources = await build(createConfinedFs(root), path, {
        generateWhenMissing: true,
        loadRestrictions: 'none',
        overrides: inputs.overrides,
      });
    } catch (err) {
      if (err instanceof KustomizeError)
        throw new RetryableError(BUILD_FAILED, `kustomize build failed: ${err.message}`);
      throw err;
    }
    const manifests: Manifest[] = [];
    for (const resource of resources) {
      let obj = resource.object as unknown as Manifest;
      const name = `${obj.kind}/${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
      // Encrypted files were decrypted before the build; what is still encrypted was not meant to be.
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

/**
 * Decrypts, in place and before the build, every SOPS-encrypted file of the private copy of the
 * tree: manifests (so kustomize's transformers work on plaintext and the MAC is checked on the file
 * as it was encrypted) and the dotenv, yaml, json and binary files generators read. Manifests
 * annotated `kustomize.mooring.dev/decrypt: Disabled` are left as they are.
 */
async function decryptTree(root: string, keys: DecryptionKeys): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(full);
        continue;
      }
      if (!entry.isFile()) continue;
      const text = await readFile(full, 'utf8');
      if (!text.includes('sops')) continue;
      const format = sopsFileFormat(entry.name, text);
      if (!format) continue;
      try {
        await writeFile(full, await decryptFile(text, format, keys, relative(root, full)));
      } catch (err) {
        throw new RetryableError(
          BUILD_FAILED,
          `decrypting ${relative(root, full)}: ${(err as Error).message}`,
        );
      }
    }
  };
  await walk(root);
}

/** The sops format of a file, or undefined for plain files and opted-out manifests. */
function sopsFileFormat(name: string, text: string): 'yaml' | 'json' | 'dotenv' | 'binary' | undefined {
  if (/^sops_mac=/m.test(text)) return 'dotenv';
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const doc = JSON.parse(text) as Record<string, unknown>;
      if (!doc.sops) return undefined;
      if (doc.kind) return optedOut(doc) ? undefined : 'json';
      return name.endsWith('.json') ? 'json' : 'binary';
    } catch {
      return undefined;
    }
  }
  if (!/^sops:\s*$/m.test(text)) return undefined;
  try {
    const doc = parseYaml(text) as Record<string, unknown> | null;
    if (!doc || typeof doc !== 'object' || !doc.sops) return undefined;
    return optedOut(doc) ? undefined : 'yaml';
  } catch {
    // Several documents in one file: sops never writes those, so it is not a sops file.
    return undefined;
  }
}

function optedOut(doc: Record<string, unknown>): boolean {
  const annotations = (doc.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
  return annotations?.[DECRYPT_ANNOTATION] === DECRYPT_DISABLED;
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
