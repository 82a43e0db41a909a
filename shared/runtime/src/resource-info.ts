import type { MooringObject, MooringStatus } from './controller.ts';
import type { ResourceInfo } from './metrics.ts';

/**
 * What `gotk_resource_info` reports of an object: Ready's status, `spec.suspend`, the revision it
 * last applied (Kustomization, HelmRelease) or stored (sources), and its `spec.sourceRef`.
 */
export function resourceInfoOf(obj: MooringObject, status: MooringStatus | undefined): ResourceInfo {
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
  const ref = obj.spec?.sourceRef as { kind?: unknown; name?: unknown } | undefined;
  return {
    ready,
    suspended: obj.spec?.suspend === true,
    revision: revisionOf(status),
    sourceKind: typeof ref?.kind === 'string' ? ref.kind : '',
    sourceName: typeof ref?.name === 'string' ? ref.name : '',
  };
}

function revisionOf(status: MooringStatus | undefined): string {
  if (typeof status?.lastAppliedRevision === 'string') return status.lastAppliedRevision;
  const artifact = status?.artifact as { revision?: unknown } | undefined;
  if (typeof artifact?.revision === 'string') return artifact.revision;
  return '';
}
