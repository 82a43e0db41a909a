// renderChart: Helm's own template engine (bin/mooring-helm.wasm, built from helm.sh/helm/v3 by
// hack/lib/build-helm.sh) run inside Node's WASI by a small pool of warm renderers, one worker
// thread each. The guest opens no directory: the chart's files, read here under chart-files.ts's
// rules, travel in the request. It has an empty environment and no sockets; its linear memory is
// capped in the module itself and its worker is terminated at the time limit and never reused.
// docs/decisions.md, "Helm rendering", says why, and shared/helm/test/sandbox.test.ts holds each
// property to a test.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readChartFiles } from './chart-files.ts';
import { HelmMemoryError, HelmRenderError, HelmTemplateError, HelmTimeoutError } from './errors.ts';
import { HelmRendererPool, type RendererModule } from './renderer-pool.ts';
import { type LookupFunction, type Outcome, RendererWorker } from './renderer-worker.ts';
import { type WasmModule, wasm } from './wasm-api.ts';
import { capMemory, pagesFor } from './wasm-memory.ts';

export interface RenderLimits {
  /**
   * Wall time for one render, from the moment a renderer takes the chart to its result (a
   * `lookup` the caller is still answering included; time in the queue and a cold renderer's
   * start-up not).
   */
  timeoutMs: number;
  /** The renderer's whole linear memory (heap, stacks, data), rounded down to 64 KiB pages. */
  memoryBytes: number;
}

export interface RenderOptions {
  chartDir: string;
  /**
   * The tree a symbolic link in the chart may lead into (a source's checkout, a kustomization's
   * root); default: the chart itself. See readChartFiles.
   */
  linksWithin?: string;
  releaseName: string;
  namespace: string;
  /** Values, merged in order like `helm template -f a -f b`: YAML text or an object. */
  values?: (string | Record<string, unknown>)[];
  /** `--set` expressions, applied after the values; then `setString` (`--set-string`). */
  set?: string[];
  setString?: string[];
  setJSON?: string[];
  /** `--kube-version`; default: the version a released helm reports offline. */
  kubeVersion?: string;
  /** `--api-versions`, added to the built-in set. */
  apiVersions?: string[];
  includeCrds?: boolean;
  isUpgrade?: boolean;
  /** `.Release.Revision`: the release version being made; 1 by default, as in `helm template`. */
  revision?: number;
  skipTests?: boolean;
  limits: RenderLimits;
  /**
   * Answers Helm's `lookup`, read-only, e.g. from the target cluster as the object's service
   * account; the renderer never holds credentials. `name` empty asks for the List object; null
   * means not found (the template gets an empty map); a rejection fails the render with a
   * HelmTemplateError. `namespace` is what the template gave, to be ignored for a cluster-scoped
   * kind. Without it, `lookup` finds nothing, as in `helm template`.
   */
  lookup?: LookupFunction;
  /** The renderers to use; default: one pool per process (defaultRendererPool). */
  pool?: HelmRendererPool;
  /** The renderer module; default $MOORING_HELM_WASM, else bin/mooring-helm.wasm of this tree. */
  wasmPath?: string;
}

export function defaultWasmPath(): string {
  return (
    process.env.MOORING_HELM_WASM || fileURLToPath(new URL('../../../bin/mooring-helm.wasm', import.meta.url))
  );
}

let defaultPool: HelmRendererPool | undefined;

/** The process's shared pool (two warm renderers, retired after a minute idle). */
export function defaultRendererPool(): HelmRendererPool {
  defaultPool ??= new HelmRendererPool();
  return defaultPool;
}

const WASM_PAGE_BYTES = 65536;
// A renderer keeps the charts it loaded (their files at most this share of its memory, the
// parsed charts a few times that), so a warm render of a chart it has seen skips loading it; the
// rest of the memory limit stays the render's.
const CHART_CACHE_SHARE = 64;

// One compiled module per (file, size, mtime, page cap): compiling is the slow part of a first render.
const modules = new Map<string, Promise<WasmModule>>();

/** The module at `path` capped at `maxPages`, named by what makes it differ. */
export function rendererModule(path: string, maxPages: number): RendererModule {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    throw new HelmRenderError(
      `the Helm renderer ${path} is missing: build it with \`bash hack/lib/build-helm.sh\``,
    );
  }
  const key = `${path}\0${st.size}\0${st.mtimeMs}\0${maxPages}`;
  return {
    key,
    chartCacheBytes: Math.floor((maxPages * WASM_PAGE_BYTES) / CHART_CACHE_SHARE),
    module: () => {
      let m = modules.get(key);
      if (!m) {
        m = wasm.compile(capMemory(readFileSync(path), maxPages));
        // Each entry holds a compiled 80 MB module: keep the few most recent (limits rarely vary).
        if (modules.size >= 4) modules.delete(modules.keys().next().value!);
        modules.set(key, m);
        m.catch(() => modules.delete(key));
      }
      return m;
    },
  };
}

/** Starts warm renderers for these limits ahead of the first render (optional: a cold one works). */
export async function prewarmRenderers(
  limits: Pick<RenderLimits, 'memoryBytes'>,
  opts: { pool?: HelmRendererPool; wasmPath?: string; count?: number } = {},
): Promise<void> {
  const pool = opts.pool ?? defaultRendererPool();
  await pool.prewarm(
    rendererModule(opts.wasmPath ?? defaultWasmPath(), pagesFor(limits.memoryBytes)),
    opts.count,
  );
}

/** Renders a chart the way `helm template` does; resolves to the same byte stream. */
export async function renderChart(opts: RenderOptions): Promise<string> {
  const { timeoutMs, memoryBytes } = opts.limits;
  if (!(timeoutMs > 0) || !(memoryBytes > 0)) throw new RangeError('renderChart: limits must be positive');
  // Read before a renderer is taken: a refused chart costs no renderer time.
  const files = readChartFiles(opts.chartDir, memoryBytes, opts.linksWithin);
  const request: RendererRequest = {
    chart: files.root,
    releaseName: opts.releaseName,
    namespace: opts.namespace,
    values: (opts.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    set: opts.set ?? [],
    setString: opts.setString ?? [],
    setJSON: opts.setJSON ?? [],
    kubeVersion: opts.kubeVersion ?? '',
    apiVersions: opts.apiVersions ?? [],
    includeCrds: opts.includeCrds ?? false,
    isUpgrade: opts.isUpgrade ?? false,
    revision: opts.revision ?? 1,
    skipTests: opts.skipTests ?? false,
    lookup: opts.lookup !== undefined,
  };
  const module = rendererModule(opts.wasmPath ?? defaultWasmPath(), pagesFor(memoryBytes));
  const pool = opts.pool ?? defaultRendererPool();
  const outcome = await pool.withRenderer(module, (worker) =>
    worker.render(requestFields(request, memoryBytes), files, timeoutMs, opts.lookup),
  );
  return resultOf(outcome, opts.chartDir, opts.limits);
}

/**
 * What hack/tools/helm-renderer/main.go reads, less the chart, which RendererWorker adds. With a
 * chart, `chart` only names its directory in Helm's messages; without, it is a path the guest
 * loads from its preopened directory (runRenderer).
 */
export interface RendererRequest {
  chart: string;
  releaseName: string;
  namespace: string;
  values: string[];
  set: string[];
  setString: string[];
  setJSON: string[];
  kubeVersion: string;
  apiVersions: string[];
  includeCrds: boolean;
  isUpgrade: boolean;
  revision?: number;
  skipTests: boolean;
  /** The host answers `lookup` (RenderOptions.lookup). */
  lookup?: boolean;
  /** Print the guest's environment, arguments and working directory instead (sandbox tests). */
  probe?: boolean;
}

function requestFields(request: RendererRequest, memoryBytes: number): Record<string, unknown> {
  // Go's soft limit below the hard cap, so garbage is collected before the cap is reached.
  return { ...request, memoryLimit: Math.floor(memoryBytes * 0.8) };
}

/**
 * One render by a renderer of its own (cold, not pooled) with `preopen` as its /chart directory,
 * left as it is. `shown` names the chart in errors. Exported for the sandbox tests, which ask the
 * guest itself to open what lies outside its chart.
 */
export async function runRenderer(
  request: RendererRequest,
  preopen: string,
  shown: string,
  limits: RenderLimits,
  wasmPath?: string,
): Promise<string> {
  const module = await rendererModule(wasmPath ?? defaultWasmPath(), pagesFor(limits.memoryBytes)).module();
  const worker = new RendererWorker(module, { preopen });
  try {
    await worker.started();
    return resultOf(
      await worker.render(requestFields(request, limits.memoryBytes), undefined, limits.timeoutMs, undefined),
      shown,
      limits,
    );
  } finally {
    worker.discard();
  }
}

function resultOf(outcome: Outcome, shown: string, limits: RenderLimits): string {
  switch (outcome.kind) {
    case 'ok':
      return outcome.output;
    case 'helm-error':
      throw new HelmTemplateError(shown, outcome.message);
    case 'timeout':
      throw new HelmTimeoutError(shown, limits.timeoutMs);
    case 'panic':
      throw new HelmRenderError(`rendering chart ${shown}: the renderer failed: ${outcome.message}`);
    case 'trap': {
      // Go prints "fatal error: out of memory" and traps when memory.grow fails at the cap.
      const oom = /^.*out of memory.*$/m.exec(outcome.stderr);
      if (oom) throw new HelmMemoryError(shown, limits.memoryBytes, oom[0].trim());
      if (/out of memory|memory access out of bounds|allocat/i.test(outcome.message)) {
        throw new HelmMemoryError(shown, limits.memoryBytes, outcome.message);
      }
      const tail = outcome.stderr.trim().split('\n').slice(-5).join('\n');
      throw new HelmRenderError(
        `rendering chart ${shown}: the renderer failed: ${outcome.message}${tail ? `: ${tail}` : ''}`,
      );
    }
  }
}
