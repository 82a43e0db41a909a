// Helm's release record (helm.sh/helm/v3 pkg/release and pkg/chart, v3.22.0) as the JSON its
// storage drivers write: field names, nesting and optionality are Helm's own, so a record read
// from a Secret `helm install` wrote and one Mooring writes are the same shape.

/** Helm's release statuses (pkg/release/status.go). */
export const RELEASE_STATUSES = [
  'unknown',
  'deployed',
  'uninstalled',
  'superseded',
  'failed',
  'uninstalling',
  'pending-install',
  'pending-upgrade',
  'pending-rollback',
] as const;
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];

/** Whether a status is an operation under way rather than a state (Helm's Status.IsPending). */
export function isPendingStatus(status: ReleaseStatus): boolean {
  return status === 'pending-install' || status === 'pending-upgrade' || status === 'pending-rollback';
}

/** The events a hook can fire on (pkg/release/hook.go); `test-success` is read as `test`. */
export const HOOK_EVENTS = [
  'pre-install',
  'post-install',
  'pre-delete',
  'post-delete',
  'pre-upgrade',
  'post-upgrade',
  'pre-rollback',
  'post-rollback',
  'test',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Helm's three delete policies; a hook declaring none gets `before-hook-creation` when it runs. */
export type HookDeletePolicy = 'hook-succeeded' | 'hook-failed' | 'before-hook-creation';
export type HookOutputLogPolicy = 'hook-succeeded' | 'hook-failed';
export type HookPhase = '' | 'Unknown' | 'Running' | 'Succeeded' | 'Failed';

/**
 * A point in time as Helm's pkg/time writes it: RFC 3339 with nanoseconds, or `""` for never.
 * Kept as text so a record read and written again keeps Helm's nanoseconds.
 */
export type HelmTime = string;

/** A JSON value, as chart values and release config hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** One file of a chart: `data` is the file's bytes in base64, as Go's []byte marshals. */
export interface ChartFileRecord {
  name: string;
  data: string;
}

export interface MaintainerRecord {
  name?: string;
  email?: string;
  url?: string;
}

export interface DependencyRecord {
  name: string;
  version?: string;
  repository: string;
  condition?: string;
  tags?: string[];
  enabled?: boolean;
  'import-values'?: JsonValue[];
  alias?: string;
}

/** Chart.yaml as Helm's chart.Metadata marshals it. */
export interface ChartMetadataRecord {
  name?: string;
  home?: string;
  sources?: string[];
  version?: string;
  description?: string;
  keywords?: string[];
  maintainers?: MaintainerRecord[];
  icon?: string;
  apiVersion?: string;
  condition?: string;
  tags?: string;
  appVersion?: string;
  deprecated?: boolean;
  annotations?: Record<string, string>;
  kubeVersion?: string;
  dependencies?: DependencyRecord[];
  type?: string;
}

/** Chart.lock (or a v1 chart's requirements.lock). */
export interface ChartLockRecord {
  generated: HelmTime;
  digest: string;
  dependencies: DependencyRecord[] | null;
}

/** The chart part of a release; subcharts are not part of it (Helm does not marshal them). */
export interface ChartRecord {
  metadata: ChartMetadataRecord | null;
  lock: ChartLockRecord | null;
  templates: ChartFileRecord[] | null;
  values: JsonObject | null;
  /** values.schema.json in base64, or null. */
  schema: string | null;
  files: ChartFileRecord[] | null;
}

export interface HookExecutionRecord {
  started_at: HelmTime;
  completed_at: HelmTime;
  phase: HookPhase;
}

/** One hook of a release (pkg/release.Hook). */
export interface HookRecord {
  name?: string;
  kind?: string;
  /** Chart-relative template path, e.g. `mychart/templates/job.yaml`. */
  path?: string;
  manifest?: string;
  events?: HookEvent[];
  last_run: HookExecutionRecord;
  weight?: number;
  delete_policies?: HookDeletePolicy[];
  output_log_policies?: HookOutputLogPolicy[];
}

export interface ReleaseInfoRecord {
  first_deployed?: HelmTime;
  last_deployed?: HelmTime;
  deleted: HelmTime;
  description?: string;
  status?: ReleaseStatus;
  notes?: string;
}

/**
 * A release as Helm stores it (pkg/release.Release). `labels` is not part of the JSON: Helm keeps
 * a release's own labels on the storage Secret, beside its system labels.
 */
export interface ReleaseRecord {
  name: string;
  info: ReleaseInfoRecord;
  chart?: ChartRecord;
  config?: JsonObject;
  /** The non-hook manifests, each `---\n# Source: <path>\n<doc>\n`, as Helm applies them. */
  manifest?: string;
  hooks?: HookRecord[];
  version: number;
  namespace?: string;
  labels?: Record<string, string>;
}

/** `date` as Helm's pkg/time marshals it: RFC 3339 in UTC, trailing zeros of the fraction dropped. */
export function helmTime(date: Date): HelmTime {
  return date.toISOString().replace(/\.?0+Z$/, 'Z');
}
