// `mooring build|diff helmrelease`: a HelmRelease rendered as the operator renders it (its values
// from the cluster in Flux's order, the release history deciding install or upgrade and the
// revision, the cluster's .Capabilities, the post-renderers and the ownership marks), from a
// local chart, through the operator's own functions (@mooring/kustomize-operator/helm-release).
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelmRelease } from '@mooring/api';
import { chartRecordOf, type JsonObject, ReleaseStore } from '@mooring/helm';
import { discoverCapabilities } from '@mooring/kustomize-operator/cluster-capabilities';
import {
  chartFolderIn,
  composeValues,
  mergeValues,
  placementOf,
  type ReleaseManifest,
  renderRelease,
  withOwnership,
} from '@mooring/kustomize-operator/helm-release';
import { defaultHelmRenderLimits } from '@mooring/kustomize-operator/render';
import { type KubeClient, type KubeObject, readObjectData } from '@mooring/runtime';
import { parse } from 'yaml';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { REPO_ROOT } from './cli-paths.ts';

export interface LocalRelease {
  objects: KubeObject[];
  hooks: ReleaseManifest['hooks'];
  action: 'install' | 'upgrade';
  revision: number;
  releaseName: string;
}

/** A chart folder, or a packaged chart extracted to a temporary folder (removed by `cleanup`). */
async function chartFolder(ref: string): Promise<{ dir: string; cleanup: () => void }> {
  if (!existsSync(ref))
    throw new CliError(`--chart ${ref} does not exist: pass a chart directory or a .tgz.`, EXIT_ERROR);
  if (statSync(ref).isDirectory()) return { dir: ref, cleanup: () => {} };
  const { extractTarGz } = await import('@mooring/artifact');
  const tmp = mkdtempSync(join(tmpdir(), 'mooring-chart-'));
  await extractTarGz(ref, join(tmp, 'package')).catch((err: Error) => {
    throw new CliError(`--chart ${ref} is not a packaged chart (.tgz): ${err.message}.`, EXIT_ERROR);
  });
  return {
    dir: chartFolderIn(join(tmp, 'package')),
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
}

/** Local values files merged over the HelmRelease's own values, as `helm -f` merges them. */
function localValues(files: string[]): JsonObject {
  let values: JsonObject = {};
  for (const file of files) {
    const doc = parse(readFileSync(file, 'utf8')) as unknown;
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== 'object' || Array.isArray(doc))
      throw new CliError(`-f ${file} is not a map of values.`, EXIT_ERROR);
    values = mergeValues(values, doc as JsonObject);
  }
  return values;
}

export async function renderHelmReleaseLocally(
  client: KubeClient,
  hr: HelmRelease,
  chartRef: string,
  valuesFiles: string[] = [],
): Promise<LocalRelease> {
  // The renderer module of this checkout, wherever the CLI bundle runs from.
  process.env.MOORING_HELM_WASM ||= join(REPO_ROOT, 'bin/mooring-helm.wasm');
  const namespace = hr.metadata.namespace ?? 'default';
  const { dir, cleanup } = await chartFolder(chartRef);
  try {
    let values = await composeValues(hr.spec.valuesFrom ?? [], hr.spec.values, (kind, name) =>
      readObjectData(client, kind, namespace, name),
    ).catch((err: Error) => {
      throw new CliError(`${err.message} in namespace ${namespace}`, EXIT_ERROR);
    });
    if (valuesFiles.length) values = mergeValues(values, localValues(valuesFiles));
    const placement = placementOf(hr);
    const history = await new ReleaseStore(client, { namespace: placement.storageNamespace }).history(
      placement.releaseName,
    );
    const action = history.some((r) => r.info.status === 'deployed') ? 'upgrade' : 'install';
    const record = chartRecordOf(dir);
    const crds =
      action === 'upgrade' ? (hr.spec.upgrade?.crds ?? 'Skip') : (hr.spec.install?.crds ?? 'Create');
    const revision = (history.at(-1)?.version ?? 0) + 1;
    const release = await renderRelease({
      chart: {
        artifact: {
          path: '',
          url: '',
          revision: record.metadata?.version ?? '',
          lastUpdateTime: new Date().toISOString(),
        },
        revision: record.metadata?.version ?? '',
        dir,
        record,
        name: record.metadata?.name ?? '',
        version: record.metadata?.version ?? '',
      },
      placement,
      values,
      isUpgrade: action === 'upgrade',
      revision,
      includeCrds: crds !== 'Skip',
      limits: defaultHelmRenderLimits,
      capabilities: () => discoverCapabilities(client),
      postRenderers: hr.spec.postRenderers ?? [],
    });
    const owner = { name: hr.metadata.name ?? '', namespace };
    return {
      objects: withOwnership(release.objects, owner, placement) as unknown as KubeObject[],
      hooks: release.hooks,
      action,
      revision,
      releaseName: placement.releaseName,
    };
  } finally {
    cleanup();
  }
}
