// `mooring build|diff helmrelease`: a HelmRelease rendered as the operator renders it (its values
// from the cluster in Flux's order, the release history deciding install or upgrade and the
// revision, the cluster's .Capabilities, the post-renderers and the ownership marks), from a
// local chart (--chart) or, without one, from the chart artifact its HelmChart or OCIRepository
// holds in the cluster, through the operator's own functions (@mooring/kustomize-operator/helm-release).
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Artifact, type HelmRelease, SOURCE_API_VERSION } from '@mooring/api';
import { chartRecordOf, type JsonObject, ReleaseStore } from '@mooring/helm';
import { discoverCapabilities } from '@mooring/kustomize-operator/cluster-capabilities';
import {
  chartFolderIn,
  chartSourceOf,
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
import { helmWasmPath } from './helm-wasm-path.ts';

export interface LocalRelease {
  objects: KubeObject[];
  hooks: ReleaseManifest['hooks'];
  action: 'install' | 'upgrade';
  revision: number;
  releaseName: string;
  /** Where the chart came from: the --chart path, or `<Kind> <namespace>/<name> <revision>`. */
  chartFrom: string;
}

/** A chart folder ready to render, the revision the operator would record, and how to let it go. */
interface ChartFolder {
  dir: string;
  revision?: string;
  from: string;
  cleanup: () => void | Promise<void>;
}

/** A chart folder, or a packaged chart extracted to a temporary folder (removed by `cleanup`). */
async function chartFolder(ref: string): Promise<ChartFolder> {
  if (!existsSync(ref))
    throw new CliError(`--chart ${ref} does not exist: pass a chart directory or a .tgz.`, EXIT_ERROR);
  if (statSync(ref).isDirectory()) return { dir: ref, from: ref, cleanup: () => {} };
  const { extractTarGz } = await import('@mooring/artifact');
  const tmp = mkdtempSync(join(tmpdir(), 'mooring-chart-'));
  await extractTarGz(ref, join(tmp, 'package')).catch((err: Error) => {
    throw new CliError(`--chart ${ref} is not a packaged chart (.tgz): ${err.message}.`, EXIT_ERROR);
  });
  return {
    dir: chartFolderIn(join(tmp, 'package')),
    from: ref,
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
}

/**
 * The chart the operator would install: the artifact of the HelmRelease's HelmChart (its own for
 * spec.chart) or OCIRepository, fetched from the URL the source operator advertises, its digest
 * checked before extraction. An artifact served only inside the cluster is refused with the way out.
 */
async function clusterChartFolder(client: KubeClient, hr: HelmRelease): Promise<ChartFolder> {
  const { fetchArtifact } = await import('@mooring/artifact');
  const source = chartSourceOf(hr);
  const label = `${source.kind} ${source.namespace}/${source.name}`;
  const obj = await client.getOrUndefined<KubeObject & { status?: { artifact?: Artifact } }>({
    apiVersion: SOURCE_API_VERSION,
    ...source,
  });
  if (!obj)
    throw new CliError(
      `${label}, where HelmRelease ${hr.metadata.namespace}/${hr.metadata.name} takes its chart, does not exist: pass --chart <dir|tgz> to render a local chart.`,
    );
  const artifact = obj.status?.artifact;
  if (!artifact?.url || !artifact.digest)
    throw new CliError(
      `${label} has no chart artifact yet: see 'mooring get sources ${source.kind === 'HelmChart' ? 'chart' : 'oci'} -n ${source.namespace}', or pass --chart <dir|tgz>.`,
    );
  let fetched: Awaited<ReturnType<typeof fetchArtifact>>;
  try {
    fetched = await fetchArtifact({
      url: artifact.url,
      digest: artifact.digest,
      retries: 1,
      timeoutMs: 60_000,
    });
  } catch (err) {
    const { ArtifactFetchError } = await import('@mooring/artifact');
    if (err instanceof ArtifactFetchError)
      throw new CliError(
        `the chart artifact of ${label} is not reachable from here (${err.message}): the source operator serves it at an address only the cluster reaches, or is not running; pass --chart <dir|tgz> with a local copy of the chart.`,
      );
    throw new CliError(`the chart artifact of ${label}: ${(err as Error).message}.`);
  }
  try {
    return {
      dir: chartFolderIn(fetched.dir),
      revision: artifact.revision,
      from: `${label} ${artifact.revision}`,
      cleanup: fetched.cleanup,
    };
  } catch (err) {
    await fetched.cleanup();
    throw new CliError(`the chart artifact of ${label}: ${(err as Error).message}.`);
  }
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

/** Renders `hr` with the chart at `chartRef`, or, without one, the chart its source holds in the cluster. */
export async function renderHelmReleaseLocally(
  client: KubeClient,
  hr: HelmRelease,
  chartRef: string | undefined,
  valuesFiles: string[] = [],
): Promise<LocalRelease> {
  process.env.MOORING_HELM_WASM ||= await helmWasmPath();
  const namespace = hr.metadata.namespace ?? 'default';
  const {
    dir,
    revision: artifactRevision,
    from,
    cleanup,
  } = chartRef === undefined ? await clusterChartFolder(client, hr) : await chartFolder(chartRef);
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
    const chartRevision = artifactRevision ?? record.metadata?.version ?? '';
    const release = await renderRelease({
      chart: {
        artifact: { path: '', url: '', revision: chartRevision, lastUpdateTime: new Date().toISOString() },
        revision: chartRevision,
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
      chartFrom: from,
    };
  } finally {
    await cleanup();
  }
}
