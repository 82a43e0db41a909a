import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Artifact, Reason } from '@mooring/api';
import { ArtifactNotFoundError, DigestMismatchError, fetchArtifact } from '@mooring/artifact';
import { RetryableError, StalledError, WaitingError } from '@mooring/runtime';
import type { RenderSpec, RenderStep } from './pipeline.ts';

/** Failures of the source steps carry Flux's reason, so users and alerts read them alike. */
export const ARTIFACT_FAILED = Reason.ArtifactFailed;

/** What the operator renders: the spec and the source's artifact. */
export interface RenderInputs extends RenderSpec {
  artifact: Artifact;
  /**
   * Who a chart's `lookup` and `.Capabilities` read the cluster as, and which cluster: the
   * impersonated identity and `spec.kubeConfig`. Builds are shared only between renders with the
   * same reader, so no chart shows one tenant what another's identity may read.
   */
  reader?: string;
}

type Extracted = { dir: string; cleanup(): Promise<void> };

const fetchVerified = (artifact: Artifact, signal: AbortSignal): Promise<Extracted> =>
  fetchArtifact({ url: artifact.url, digest: artifact.digest ?? '', timeoutMs: 60_000, signal });

/**
 * Extracted artifacts by digest, shared by every render of the same revision (N Kustomizations on
 * one source fetch it once). Content-addressed, so an entry never goes stale; the oldest are
 * removed from disk beyond `max`.
 */
export class ArtifactCache {
  readonly #entries = new Map<string, Promise<Extracted>>();
  readonly #max: number;

  constructor(max = 8) {
    this.#max = max;
  }

  get(artifact: Artifact, signal: AbortSignal): Promise<{ dir: string }> {
    const key = artifact.digest ?? artifact.url;
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = fetchVerified(artifact, signal);
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

/**
 * The operator's source steps: fetch the artifact, verify its digest and extract it
 * (`fetchArtifact` checks the digest before anything is extracted, so the three are one step), then
 * check that `spec.path` is a folder of it. With `artifacts` the extracted tree is shared and
 * kept; without, it is removed when the render ends. Decryption happens as the build reads, never
 * in the tree, so decrypting renders share it too.
 */
export function artifactSource(artifacts?: ArtifactCache): readonly RenderStep<RenderInputs>[] {
  return [
    {
      name: 'fetch and verify artifact',
      async run(state) {
        const { artifact } = state.inputs;
        let dir: string;
        try {
          if (artifacts) dir = (await artifacts.get(artifact, state.signal)).dir;
          else {
            const fetched = await fetchVerified(artifact, state.signal);
            state.cleanups.push(() => fetched.cleanup());
            dir = fetched.dir;
          }
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
        state.tree = {
          root: dir,
          path: (state.inputs.path || './').replace(/^\.\/?/, '').replace(/\/+$/, ''),
        };
      },
    },
    {
      name: 'check path',
      async run(state) {
        const { root, path } = state.tree!;
        try {
          const st = await lstat(join(root, path));
          if (!st.isDirectory()) throw new Error('not a directory');
        } catch {
          throw new StalledError(
            ARTIFACT_FAILED,
            `path '${state.inputs.path}' does not exist in revision '${state.inputs.artifact.revision}'`,
          );
        }
      },
    },
  ];
}
