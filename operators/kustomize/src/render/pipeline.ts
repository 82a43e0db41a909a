import { createHash } from 'node:crypto';
import {
  DECRYPT_ANNOTATION,
  DECRYPT_DISABLED,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  Reason,
} from '@mooring/api';
import {
  build,
  type ConfinedFs,
  createConfinedFs,
  HelmInflationError,
  type KustomizationOverrides,
  KustomizeError,
  type Resource,
  toYAML,
} from '@mooring/kustomize';
import { RetryableError, runSteps, type Step } from '@mooring/runtime';
import type { Manifest } from '../apply/object-policy.ts';
import { buildDecrypting, type DecryptionKeys, FileDecryptionError, isSopsEncrypted } from '../sops/index.ts';
import { type SubstituteOptions, substituteVariables } from '../substitute.ts';
import { defaultHelmRenderLimits, type HelmRenderSettings, helmRenderer } from './helm-renderer.ts';

/** Failures of the build and what follows it carry Flux's reason, so users and alerts read them alike. */
export const BUILD_FAILED = Reason.BuildFailed;

/**
 * Everything a render depends on besides where its files come from; equal inputs give equal
 * output. The operator adds the artifact (`RenderInputs`), the CLI a local folder.
 */
export interface RenderSpec {
  /** The kustomization's folder inside the tree the source step provides. */
  path: string;
  overrides: KustomizationOverrides;
  decryption?: DecryptionKeys;
  substitute?: { vars: Record<string, string>; options: SubstituteOptions };
  owner: { name: string; namespace: string };
}

export interface Rendered {
  manifests: Manifest[];
  /** sha256 of the rendered YAML, for `status.history`. */
  digest: string;
}

/** What the steps of one render read and extend, in order. */
export interface RenderState<I extends RenderSpec = RenderSpec> {
  readonly inputs: I;
  readonly signal: AbortSignal;
  /** Where `helmCharts:` render: the limits and the target's capabilities (not inputs: they hold functions). */
  readonly helm: HelmRenderSettings;
  /** The tree the build may read (its confinement root) and the kustomization's folder in it; set by the source. */
  tree?: { root: string; path: string };
  /** How the build reads the tree: plainly unless the decrypt step made it a decrypting view. */
  read?: (run: (fs: ConfinedFs) => Promise<Resource[]>) => Promise<Resource[]>;
  /** The objects, from the build on. */
  objects?: Manifest[];
  /** Run after the last step, whether or not the render succeeded (a source's clean-up), last first. */
  readonly cleanups: (() => Promise<void>)[];
}

/** One step of a render, in the runtime's step shape; it throws a reconcile error (reason and message) to fail the render. */
export type RenderStep<I extends RenderSpec = RenderSpec> = Step<RenderState<I>>;

/** What an earlier step provides; missing only when a step list is out of order. */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`render steps out of order: ${what} is not known yet`);
  return value;
}

const objectName = (obj: Manifest): string =>
  `${obj.kind}/${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;

/** With `spec.decryption`, the build reads SOPS files as their plaintext: only those it reads, never in the tree. */
export const decrypt: RenderStep = {
  name: 'decrypt',
  run(state) {
    const keys = state.inputs.decryption;
    if (!keys) return;
    const { root } = need(state.tree, 'the tree (no source step ran)');
    state.read = async (run) => {
      try {
        return await buildDecrypting(() => createConfinedFs(root), keys, run);
      } catch (err) {
        if (err instanceof FileDecryptionError)
          throw new RetryableError(BUILD_FAILED, err.message, { cause: err });
        throw err;
      }
    };
  },
};

/** kustomize build of the folder with the Kustomization's overrides, a kustomization generated where there is none. */
export const buildStep: RenderStep = {
  name: 'build',
  async run(state) {
    const tree = need(state.tree, 'the tree (no source step ran)');
    const read = state.read ?? ((run) => run(createConfinedFs(tree.root)));
    // One renderer for the build's passes (a decrypting build runs again): a chart renders once.
    const renderer = helmRenderer(state.helm);
    let resources: Resource[];
    try {
      resources = await read((fs) =>
        build(fs, tree.path, {
          generateWhenMissing: true,
          loadRestrictions: 'none',
          overrides: state.inputs.overrides,
          helm: renderer,
        }),
      );
    } catch (err) {
      // A chart's templates or the sandbox's limits, not the kustomization: its own reason.
      if (err instanceof HelmInflationError)
        throw new RetryableError(Reason.HelmRenderFailed, `Helm chart render failed: ${err.message}`, {
          cause: err,
        });
      if (err instanceof KustomizeError)
        throw new RetryableError(BUILD_FAILED, `kustomize build failed: ${err.message}`, { cause: err });
      throw err;
    }
    state.objects = resources.map((r) => r.object as unknown as Manifest);
  },
};

/**
 * Encrypted files the build read were decrypted as it read them; an object still encrypted was not
 * meant to be applied. Checked before any later step sees the objects.
 */
export const refuseCiphertext: RenderStep = {
  name: 'refuse ciphertext',
  run(state) {
    for (const obj of need(state.objects, 'the objects (no build step ran)')) {
      if (!isSopsEncrypted(obj) || obj.metadata?.annotations?.[DECRYPT_ANNOTATION] === DECRYPT_DISABLED)
        continue;
      throw new RetryableError(
        BUILD_FAILED,
        state.inputs.decryption
          ? `${objectName(obj)} is still SOPS-encrypted after decryption: refusing to apply ciphertext`
          : `${objectName(obj)} is SOPS-encrypted but spec.decryption is not set: refusing to apply ciphertext`,
      );
    }
  },
};

/** `spec.postBuild`: Flux's variable substitution on each built object. */
export const substitute: RenderStep = {
  name: 'substitute variables',
  run(state) {
    const sub = state.inputs.substitute;
    if (!sub) return;
    state.objects = need(state.objects, 'the objects (no build step ran)').map((obj) => {
      try {
        return substituteVariables(obj, sub.vars, sub.options, objectName(obj)) as Manifest;
      } catch (err) {
        throw new RetryableError(BUILD_FAILED, `post-build substitution failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
    });
  },
};

/** The owner labels `mooring trace`, prune and the inventory follow back to the Kustomization. */
export const label: RenderStep = {
  name: 'label owner',
  run(state) {
    const { owner } = state.inputs;
    for (const obj of need(state.objects, 'the objects (no build step ran)')) {
      obj.metadata.labels = {
        ...obj.metadata.labels,
        [KUSTOMIZE_NAME_LABEL]: owner.name,
        [KUSTOMIZE_NAMESPACE_LABEL]: owner.namespace,
      };
    }
  },
};

/**
 * The build half of a render: the source's steps (the operator: fetch and verify the artifact,
 * check the path; the CLI: a local folder), then decrypt, build, refuse ciphertext. What it makes
 * depends on the files, the path, the overrides and the keys, not on the owner or its variables.
 */
export function buildSteps<I extends RenderSpec>(source: readonly RenderStep<I>[]): readonly RenderStep<I>[] {
  return [...source, decrypt, buildStep, refuseCiphertext];
}

/** The per-owner half, on the built objects: substitute, label. */
export const finishSteps: readonly RenderStep[] = [substitute, label];

/**
 * A Kustomization's render, in order: {@link buildSteps}, then {@link finishSteps}. A new kind of
 * render (Helm) is one more entry here.
 */
export function renderSteps<I extends RenderSpec>(
  source: readonly RenderStep<I>[],
): readonly RenderStep<I>[] {
  return [...buildSteps(source), ...finishSteps];
}

/**
 * Runs `steps` over `inputs`, starting from `objects` when an earlier run built them; the first
 * step that throws fails the render. Clean-ups run either way. Returns the objects.
 */
export async function runRenderSteps<I extends RenderSpec>(
  steps: readonly RenderStep<I>[],
  inputs: I,
  signal: AbortSignal,
  helm: HelmRenderSettings = { limits: defaultHelmRenderLimits },
  objects?: Manifest[],
): Promise<Manifest[]> {
  const state: RenderState<I> = { inputs, signal, helm, cleanups: [], objects };
  try {
    await runSteps(steps, state);
    return state.objects ?? [];
  } finally {
    for (const cleanup of state.cleanups.reverse()) await cleanup();
  }
}

/** The render's objects with the digest of their YAML (`status.history`). */
export function rendered(manifests: Manifest[]): Rendered {
  const yaml = toYAML(manifests.map((object) => ({ object: object as never, previousIds: [] })));
  return { manifests, digest: `sha256:${createHash('sha256').update(yaml).digest('hex')}` };
}

/** Runs a whole render's `steps` over `inputs` (see {@link runRenderSteps}). */
export async function runRender<I extends RenderSpec>(
  steps: readonly RenderStep<I>[],
  inputs: I,
  signal: AbortSignal,
  helm: HelmRenderSettings = { limits: defaultHelmRenderLimits },
): Promise<Rendered> {
  return rendered(await runRenderSteps(steps, inputs, signal, helm));
}

/**
 * The source for a folder on disk (`mooring build|diff kustomization --path`): nothing to fetch or
 * verify; `root` confines what the build may read and `inputs.path` is the folder inside it.
 */
export function folderSource(root: string): readonly RenderStep[] {
  return [
    {
      name: 'read folder',
      run(state) {
        state.tree = { root, path: state.inputs.path };
      },
    },
  ];
}
