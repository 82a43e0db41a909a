export { copyChart, copyChartInto } from './chart-copy.ts';
export {
  HelmChartError,
  HelmMemoryError,
  HelmRenderError,
  HelmTemplateError,
  HelmTimeoutError,
} from './errors.ts';
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
