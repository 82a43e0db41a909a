// One HelmRelease whose chart is a folder of the planned repository (spec.chart.spec.chart from a
// GitRepository of it) rendered as the operator renders it, offline: an install at revision 1
// with a released helm's .Capabilities, the chart's valuesFiles then spec.values (valuesFrom is
// the cluster's and is left out, said in a note), post-renderers and ownership marks.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HelmRelease } from '@mooring/api';
import { chartRecordOf, type JsonObject } from '@mooring/helm';
import {
  mergeValues,
  placementOf,
  renderRelease,
  withOwnership,
} from '@mooring/kustomize-operator/helm-release';
import { defaultHelmRenderLimits } from '@mooring/kustomize-operator/render';
import type { KubeObject } from '@mooring/runtime';
import { parse } from 'yaml';
import { REPO_ROOT } from '../cli-paths.ts';
import { specFolder } from './kustomization-inputs.ts';
import type { OfflineRender } from './render-offline.ts';

interface ChartTemplate {
  chart?: string;
  valuesFiles?: string[];
}

/** The chart folder and values files a HelmRelease reads from the repository, as tree paths. */
export function helmReleaseInputs(hr: { spec: Record<string, unknown> }): string[] {
  const tpl = ((hr.spec.chart as { spec?: ChartTemplate } | undefined)?.spec ?? {}) as ChartTemplate;
  return [specFolder(tpl.chart), ...(tpl.valuesFiles ?? []).map(specFolder)];
}

function valuesFile(root: string, rel: string): JsonObject {
  const abs = join(root, specFolder(rel));
  if (!existsSync(abs)) throw new Error(`values file ${rel} does not exist in the revision`);
  const doc = parse(readFileSync(abs, 'utf8')) as unknown;
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`values file ${rel} is not a map of values`);
  return doc as JsonObject;
}

export async function renderHelmOffline(root: string, hr: HelmRelease): Promise<OfflineRender> {
  process.env.MOORING_HELM_WASM ||= join(REPO_ROOT, 'bin/mooring-helm.wasm');
  const notes: string[] = [];
  if (hr.spec.valuesFrom?.length)
    notes.push(
      'valuesFrom is read from the cluster: the offline render uses the chart values and spec.values only',
    );
  const tpl = ((hr.spec as { chart?: { spec?: ChartTemplate } }).chart?.spec ?? {}) as ChartTemplate;
  try {
    const dir = join(root, specFolder(tpl.chart));
    if (!tpl.chart || !existsSync(join(dir, 'Chart.yaml')))
      throw new Error(`chart ${tpl.chart ?? '(none)'} is not a chart folder of the revision (no Chart.yaml)`);
    let values: JsonObject = {};
    for (const file of tpl.valuesFiles ?? []) values = mergeValues(values, valuesFile(root, file));
    values = mergeValues(values, (hr.spec.values ?? {}) as JsonObject);
    const record = chartRecordOf(dir);
    const placement = placementOf(hr);
    const version = record.metadata?.version ?? '';
    const release = await renderRelease({
      chart: {
        artifact: { path: '', url: '', revision: version, lastUpdateTime: new Date(0).toISOString() },
        revision: version,
        dir,
        record,
        name: record.metadata?.name ?? '',
        version,
      },
      placement,
      values,
      isUpgrade: false,
      revision: 1,
      includeCrds: (hr.spec.install?.crds ?? 'Create') !== 'Skip',
      limits: defaultHelmRenderLimits,
      postRenderers: hr.spec.postRenderers ?? [],
    });
    const owner = { name: hr.metadata.name ?? '', namespace: hr.metadata.namespace ?? 'default' };
    return { objects: withOwnership(release.objects, owner, placement) as unknown as KubeObject[], notes };
  } catch (err) {
    return { error: (err as Error).message, notes };
  }
}
