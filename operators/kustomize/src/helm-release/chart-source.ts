// The chart a HelmRelease installs: from `spec.chartRef` (a HelmChart or OCIRepository the user
// manages) or from `spec.chart`, through a HelmChart the operator creates and owns, as Flux does.
// Its artifact is fetched and verified through the operator's one ArtifactCache, and the chart
// folder found inside it; nothing is read from outside the extracted tree.
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  type Artifact,
  HELM_NAME_LABEL,
  HELM_NAMESPACE_LABEL,
  type HelmRelease,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import { ArtifactNotFoundError, DigestMismatchError } from '@mooring/artifact';
import { ChartRecordError, chartRecordOf } from '@mooring/helm';
import {
  ApiError,
  FIELD_MANAGER,
  type Impersonation,
  type KubeClient,
  type KubeObject,
  RetryableError,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import type { ArtifactCache } from '../render/index.ts';
import type { ResolvedChart } from './helm-release-run.ts';
import { helmChartNameOf } from './release-names.ts';

type SourceObject = KubeObject & {
  status?: {
    artifact?: Artifact;
    observedGeneration?: number;
    conditions?: { type: string; status: string; message?: string }[];
  };
};

/** Where the chart's artifact comes from: the HelmChart or OCIRepository to read. */
export function chartSourceOf(obj: HelmRelease): {
  kind: 'HelmChart' | 'OCIRepository';
  namespace: string;
  name: string;
} {
  const own = obj.metadata.namespace ?? 'default';
  if (obj.spec.chartRef) {
    const ref = obj.spec.chartRef;
    return { kind: ref.kind, namespace: ref.namespace ?? own, name: ref.name };
  }
  const made = helmChartNameOf(obj);
  if (!made) throw new StalledError(Reason.InvalidSpec, 'set one of spec.chart and spec.chartRef');
  return { kind: 'HelmChart', ...made };
}

/** The HelmChart the operator keeps for `spec.chart`, as it would write it. */
export function helmChartFor(obj: HelmRelease): KubeObject {
  const tpl = obj.spec.chart!;
  const where = helmChartNameOf(obj)!;
  const s = tpl.spec;
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'HelmChart',
    metadata: {
      name: where.name,
      namespace: where.namespace,
      labels: {
        ...tpl.metadata?.labels,
        [HELM_NAME_LABEL]: obj.metadata.name!,
        [HELM_NAMESPACE_LABEL]: obj.metadata.namespace ?? 'default',
      },
      ...(tpl.metadata?.annotations ? { annotations: tpl.metadata.annotations } : {}),
    },
    spec: {
      chart: s.chart,
      ...(s.version ? { version: s.version } : {}),
      sourceRef: { kind: s.sourceRef.kind, name: s.sourceRef.name },
      interval: s.interval ?? obj.spec.interval,
      ...(s.reconcileStrategy ? { reconcileStrategy: s.reconcileStrategy } : {}),
      ...(s.valuesFiles ? { valuesFiles: s.valuesFiles } : {}),
      ...(s.ignoreMissingValuesFiles ? { ignoreMissingValuesFiles: true } : {}),
    },
  } as KubeObject;
}

/** The artifact of the chart source; creates or updates the owned HelmChart first. Waits while it has none. */
export async function chartArtifact(
  client: KubeClient,
  obj: HelmRelease,
  opts: { noCrossNamespaceRefs: boolean; requeueDependencyMs: number; impersonate?: Impersonation },
): Promise<{ artifact: Artifact; helmChart?: string }> {
  const source = chartSourceOf(obj);
  const label = `${source.kind} ${source.namespace}/${source.name}`;
  if (opts.noCrossNamespaceRefs && source.namespace !== obj.metadata.namespace) {
    throw new StalledError(
      Reason.AccessDenied,
      `cannot use ${label}: references to other namespaces are not allowed (--no-cross-namespace-refs)`,
    );
  }
  if (obj.spec.chart) {
    const desired = helmChartFor(obj) as KubeObject & { metadata: { name: string } };
    // Written as the HelmRelease's identity, as its objects are: the operator writes nothing as itself.
    await client.apply(desired, { fieldManager: FIELD_MANAGER, force: true, impersonate: opts.impersonate });
  }
  let found: SourceObject;
  try {
    found = await client.get<SourceObject>({
      apiVersion: SOURCE_API_VERSION,
      kind: source.kind,
      namespace: source.namespace,
      name: source.name,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new RetryableError(Reason.ArtifactFailed, `${label} not found`);
    throw err;
  }
  const artifact = found.status?.artifact;
  // A HelmChart just changed by us still holds the old chart's artifact until its operator looks.
  const stale = obj.spec.chart && found.status?.observedGeneration !== found.metadata.generation;
  if (!artifact || stale) {
    const ready = found.status?.conditions?.find((c) => c.type === 'Ready');
    const why = ready?.status === 'False' && ready.message ? `: ${ready.message}` : '';
    throw new WaitingError(
      Reason.ArtifactFailed,
      `${label} has no artifact ${artifact ? 'of its latest spec ' : ''}yet${why}`,
      opts.requeueDependencyMs,
    );
  }
  return {
    artifact,
    ...(source.kind === 'HelmChart' ? { helmChart: `${source.namespace}/${source.name}` } : {}),
  };
}

/** The chart folder of an extracted artifact: its root, else its one top-level folder with a Chart.yaml. */
export function chartFolderIn(root: string): string {
  if (existsSync(join(root, 'Chart.yaml'))) return root;
  const candidates = readdirSync(root).filter((name) => {
    const dir = join(root, name);
    return statSync(dir).isDirectory() && existsSync(join(dir, 'Chart.yaml'));
  });
  if (candidates.length !== 1)
    throw new StalledError(
      Reason.ArtifactFailed,
      `the artifact holds ${candidates.length === 0 ? 'no chart' : `${candidates.length} charts`}: expected one folder with a Chart.yaml`,
    );
  const dir = join(root, candidates[0]!);
  // Extraction never writes links that leave the tree; a folder resolving outside it is refused anyway.
  if (relative(realpathSync(root), realpathSync(dir)).startsWith('..'))
    throw new StalledError(Reason.ArtifactFailed, 'the chart folder leaves the artifact');
  return dir;
}

/** Fetches (digest checked before extraction, paths confined) and reads the chart of `artifact`. */
export async function fetchChart(
  artifacts: ArtifactCache,
  artifact: Artifact,
  signal: AbortSignal,
): Promise<ResolvedChart> {
  let root: string;
  try {
    root = (await artifacts.get(artifact, signal)).dir;
  } catch (err) {
    if (err instanceof ArtifactNotFoundError)
      throw new WaitingError(
        Reason.ArtifactFailed,
        `artifact of revision '${artifact.revision}' is not in storage yet`,
        5_000,
      );
    if (err instanceof DigestMismatchError) throw new RetryableError(Reason.ArtifactFailed, err.message);
    throw new RetryableError(
      Reason.ArtifactFailed,
      `fetching the chart artifact of revision '${artifact.revision}': ${(err as Error).message}`,
    );
  }
  const dir = chartFolderIn(root);
  let record: ReturnType<typeof chartRecordOf>;
  try {
    record = chartRecordOf(dir);
  } catch (err) {
    if (err instanceof ChartRecordError) throw new StalledError(Reason.ArtifactFailed, err.message);
    throw err;
  }
  const meta = record.metadata ?? {};
  return {
    artifact,
    revision: artifact.revision,
    dir,
    record,
    name: meta.name ?? '',
    version: meta.version ?? '',
    ...(meta.appVersion ? { appVersion: meta.appVersion } : {}),
  };
}
