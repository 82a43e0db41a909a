import type { MooringObject, MooringStatus } from './controller.ts';
import type { ResourceInfo } from './metrics.ts';

/**
 * What `gotk_resource_info` reports of an object: Ready's status, `spec.suspend`, the revision it
 * last applied (Kustomization; a HelmRelease's newest release's chart version) or stored (sources),
 * and its source reference.
 */
export function resourceInfoOf(obj: MooringObject, status: MooringStatus | undefined): ResourceInfo {
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
  const ref = sourceRefOf(obj);
  return {
    ready,
    suspended: obj.spec?.suspend === true,
    revision: revisionOf(status),
    sourceKind: typeof ref?.kind === 'string' ? ref.kind : '',
    sourceName: typeof ref?.name === 'string' ? ref.name : '',
  };
}

type Ref = { kind?: unknown; name?: unknown } | undefined;

/** `spec.sourceRef`, or a HelmRelease's `spec.chartRef` or `spec.chart.spec.sourceRef`. */
function sourceRefOf(obj: MooringObject): Ref {
  const spec = obj.spec as
    | { sourceRef?: Ref; chartRef?: Ref; chart?: { spec?: { sourceRef?: Ref } } }
    | undefined;
  return spec?.sourceRef ?? spec?.chartRef ?? spec?.chart?.spec?.sourceRef;
}

function revisionOf(status: MooringStatus | undefined): string {
  if (typeof status?.lastAppliedRevision === 'string') return status.lastAppliedRevision;
  const artifact = status?.artifact as { revision?: unknown } | undefined;
  if (typeof artifact?.revision === 'string') return artifact.revision;
  // A HelmRelease: the chart version of its newest release, as Flux's kube-state-metrics config reads it.
  const history = status?.history as { chartVersion?: unknown }[] | undefined;
  const release = Array.isArray(history) ? history[0] : undefined;
  if (typeof release?.chartVersion === 'string') return release.chartVersion;
  return '';
}
