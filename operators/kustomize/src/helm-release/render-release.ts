// A release's objects: the chart rendered by Helm's engine in its sandbox (the real IsInstall /
// IsUpgrade and Revision, the target's .Capabilities, lookup read-only as the apply's identity),
// split into the manifest and its hooks as Helm splits them, run through the post-renderers
// (kustomize patches and images, by Mooring's own kustomize build), then marked with Mooring's
// owner labels and Helm's ownership metadata so both `mooring trace` and `helm` see them as the
// release's.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HELM_NAME_LABEL, HELM_NAMESPACE_LABEL, type HelmRelease, Reason } from '@mooring/api';
import {
  HelmRenderError,
  type JsonObject,
  type LookupFunction,
  RenderSplitError,
  renderChart,
  splitRender,
} from '@mooring/helm';
import {
  build,
  createConfinedFs,
  type KustomizationOverrides,
  KustomizeError,
  toYAML,
} from '@mooring/kustomize';
import { RetryableError } from '@mooring/runtime';
import { parseAllDocuments } from 'yaml';
import type { Manifest } from '../apply/object-policy.ts';
import type { HelmCapabilities, HelmRenderLimits } from '../render/index.ts';
import type { ReleaseManifest, ResolvedChart } from './helm-release-run.ts';
import type { ReleasePlacement } from './release-names.ts';

export interface ReleaseRenderRequest {
  chart: ResolvedChart;
  placement: ReleasePlacement;
  values: JsonObject;
  isUpgrade: boolean;
  revision: number;
  includeCrds: boolean;
  limits: HelmRenderLimits;
  capabilities?: () => Promise<HelmCapabilities>;
  lookup?: LookupFunction;
  postRenderers: NonNullable<HelmRelease['spec']['postRenderers']>;
}

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The objects of a manifest text (Helm's or a record's); `# Source:` comments and empty documents dropped. */
export function objectsOf(manifest: string): Manifest[] {
  const out: Manifest[] = [];
  for (const doc of parseAllDocuments(manifest)) {
    if (doc.errors.length)
      throw new RenderSplitError(`the manifest is not valid YAML: ${doc.errors[0]?.message}`);
    const obj = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (obj && typeof obj === 'object' && !Array.isArray(obj)) out.push(obj as Manifest);
  }
  return out;
}

/** Kustomize patches and images over the rendered objects, one post-renderer after the other. */
async function postRender(
  objects: Manifest[],
  postRenderers: ReleaseRenderRequest['postRenderers'],
): Promise<Manifest[]> {
  let current = objects;
  for (const [i, pr] of postRenderers.entries()) {
    if (!pr.kustomize) continue;
    const dir = await mkdtemp(join(tmpdir(), 'mooring-post-render-'));
    try {
      await writeFile(
        join(dir, 'release.yaml'),
        toYAML(current.map((o) => ({ object: o as never, previousIds: [] }))),
      );
      await writeFile(join(dir, 'kustomization.yaml'), 'resources:\n- release.yaml\n');
      const overrides: KustomizationOverrides = {
        patches: pr.kustomize.patches as KustomizationOverrides['patches'],
        images: pr.kustomize.images as KustomizationOverrides['images'],
      };
      const built = await build(createConfinedFs(dir), '.', { overrides, loadRestrictions: 'rootOnly' });
      current = built.map((r) => r.object as unknown as Manifest);
    } catch (err) {
      if (err instanceof KustomizeError)
        throw new RetryableError(Reason.BuildFailed, `postRenderers[${i}] failed: ${err.message}`, {
          cause: err,
        });
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return current;
}

/** Renders the release: Helm's manifest and hooks, and the objects to apply after the post-renderers. */
export async function renderRelease(req: ReleaseRenderRequest): Promise<ReleaseManifest> {
  const caps = req.capabilities ? await req.capabilities() : undefined;
  let stream: string;
  try {
    stream = await renderChart({
      chartDir: req.chart.dir,
      releaseName: req.placement.releaseName,
      namespace: req.placement.targetNamespace,
      values: [req.values as Record<string, unknown>],
      isUpgrade: req.isUpgrade,
      revision: req.revision,
      includeCrds: req.includeCrds,
      limits: req.limits,
      ...(caps ? { kubeVersion: caps.kubeVersion, apiVersions: caps.apiVersions } : {}),
      ...(req.lookup ? { lookup: req.lookup } : {}),
    });
  } catch (err) {
    if (err instanceof HelmRenderError)
      throw new RetryableError(
        Reason.HelmRenderFailed,
        `Helm chart ${req.chart.name}@${req.chart.version} render failed: ${err.message}`,
        { cause: err },
      );
    throw err;
  }
  let split: ReturnType<typeof splitRender>;
  let objects: Manifest[];
  try {
    split = splitRender(stream);
    objects = objectsOf(split.manifest);
  } catch (err) {
    if (err instanceof RenderSplitError) throw new RetryableError(Reason.HelmRenderFailed, err.message);
    throw err;
  }
  let manifest = split.manifest;
  if (req.postRenderers.some((p) => p.kustomize)) {
    objects = await postRender(objects, req.postRenderers);
    // Helm stores what the post-renderer returned as the release's manifest.
    manifest = toYAML(objects.map((o) => ({ object: o as never, previousIds: [] })));
  }
  return { manifest, hooks: split.hooks, objects, digest: sha256(manifest) };
}

/** A stored record's manifest as objects to apply again (drift correction, rollback). */
export function releaseFromRecord(manifest: string, hooks: ReleaseManifest['hooks']): ReleaseManifest {
  return { manifest, hooks, objects: objectsOf(manifest), digest: sha256(manifest) };
}

/**
 * Mooring's owner labels and Helm's ownership metadata on every object (Helm checks them before it
 * upgrades an object it did not create): app.kubernetes.io/managed-by=Helm and the
 * meta.helm.sh/release-name and -namespace annotations.
 */
export function withOwnership(
  objects: Manifest[],
  owner: { name: string; namespace: string },
  placement: ReleasePlacement,
): Manifest[] {
  return objects.map((obj) => ({
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: {
        ...obj.metadata?.labels,
        'app.kubernetes.io/managed-by': 'Helm',
        [HELM_NAME_LABEL]: owner.name,
        [HELM_NAMESPACE_LABEL]: owner.namespace,
      },
      annotations: {
        ...obj.metadata?.annotations,
        'meta.helm.sh/release-name': placement.releaseName,
        'meta.helm.sh/release-namespace': placement.targetNamespace,
      },
    },
  }));
}
