export {
  HelmChartError,
  HelmMemoryError,
  HelmRenderError,
  HelmTemplateError,
  HelmTimeoutError,
} from './errors.ts';
export { ChartRecordError, chartRecordOf } from './release/chart-record.ts';
export { releaseJson } from './release/release-json.ts';
export {
  type ChartFileRecord,
  type ChartLockRecord,
  type ChartMetadataRecord,
  type ChartRecord,
  type DependencyRecord,
  type HelmTime,
  HOOK_EVENTS,
  type HookDeletePolicy,
  type HookEvent,
  type HookExecutionRecord,
  type HookOutputLogPolicy,
  type HookPhase,
  type HookRecord,
  helmTime,
  isPendingStatus,
  type JsonObject,
  type JsonValue,
  type MaintainerRecord,
  RELEASE_STATUSES,
  type ReleaseInfoRecord,
  type ReleaseRecord,
  type ReleaseStatus,
} from './release/release-record.ts';
export {
  decodeRelease,
  decodeReleaseSecret,
  encodeRelease,
  encodeReleaseSecret,
  MAX_RELEASE_DATA_BYTES,
  MAX_RELEASE_JSON_BYTES,
  RELEASE_SECRET_TYPE,
  ReleaseRecordError,
  type ReleaseSecret,
  type ReleaseSecretOptions,
  releaseSecretName,
  SYSTEM_LABELS,
} from './release/release-secret.ts';
export { ReleaseExistsError, ReleaseStore, type ReleaseStoreOptions } from './release/release-store.ts';
export {
  deletePoliciesOf,
  hooksFor,
  RenderSplitError,
  type SplitRender,
  splitRender,
} from './release/render-split.ts';
export {
  defaultRendererPool,
  defaultWasmPath,
  prewarmRenderers,
  type RenderLimits,
  type RenderOptions,
  renderChart,
} from './render.ts';
export { type HelmPoolOptions, HelmRendererPool } from './renderer-pool.ts';
export { LOOKUP_ANSWER_LIMIT, type LookupFunction } from './renderer-worker.ts';
export { capMemory, pagesFor } from './wasm-memory.ts';
