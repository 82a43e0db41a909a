export { copyChart } from './chart-copy.ts';
export {
  HelmChartError,
  HelmMemoryError,
  HelmRenderError,
  HelmTemplateError,
  HelmTimeoutError,
} from './errors.ts';
export { defaultWasmPath, type RenderLimits, type RenderOptions, renderChart } from './render.ts';
export { capMemory, pagesFor } from './wasm-memory.ts';
