// renderChart: Helm's own template engine (bin/mooring-helm.wasm, built from helm.sh/helm/v3 by
// hack/lib/build-helm.sh) run inside Node's WASI in a worker thread. The guest sees a copy of the
// chart as its one directory, an empty environment and no sockets; its linear memory is capped
// in the module itself and the worker is terminated at the time limit. docs/decisions.md, "Helm
// rendering", says why, and shared/helm/test/sandbox.test.ts holds each property to a test.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { copyChart } from './chart-copy.ts';
import { HelmMemoryError, HelmRenderError, HelmTemplateError, HelmTimeoutError } from './errors.ts';
import { type WasmModule, wasm } from './wasm-api.ts';
import { capMemory, pagesFor } from './wasm-memory.ts';

export interface RenderLimits {
  /** Wall time for one render, from the worker's start to its end (Go start-up included). */
  timeoutMs: number;
  /** The renderer's whole linear memory (heap, stacks, data), rounded down to 64 KiB pages. */
  memoryBytes: number;
}

export interface RenderOptions {
  chartDir: string;
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
  skipTests?: boolean;
  limits: RenderLimits;
  /** The renderer module; default $MOORING_HELM_WASM, else bin/mooring-helm.wasm of this tree. */
  wasmPath?: string;
}

const WORKER = new URL('./wasi-worker.mjs', import.meta.url);

export function defaultWasmPath(): string {
  return (
    process.env.MOORING_HELM_WASM || fileURLToPath(new URL('../../../bin/mooring-helm.wasm', import.meta.url))
  );
}

// One compiled module per (file, size, mtime, page cap): compiling is the slow part of a first render.
const modules = new Map<string, Promise<WasmModule>>();

function compiled(path: string, maxPages: number): Promise<WasmModule> {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return Promise.reject(
      new HelmRenderError(
        `the Helm renderer ${path} is missing: build it with \`bash hack/lib/build-helm.sh\``,
      ),
    );
  }
  const key = `${path}\0${st.size}\0${st.mtimeMs}\0${maxPages}`;
  let m = modules.get(key);
  if (!m) {
    m = wasm.compile(capMemory(readFileSync(path), maxPages));
    // Each entry holds a compiled 80 MB module: keep the few most recent (limits rarely vary).
    if (modules.size >= 4) modules.delete(modules.keys().next().value!);
    modules.set(key, m);
    m.catch(() => modules.delete(key));
  }
  return m;
}

/** Renders a chart the way `helm template` does; resolves to the same byte stream. */
export async function renderChart(opts: RenderOptions): Promise<string> {
  const { timeoutMs, memoryBytes } = opts.limits;
  if (!(timeoutMs > 0) || !(memoryBytes > 0)) throw new RangeError('renderChart: limits must be positive');
  const work = mkdtempSync(join(tmpdir(), 'mooring-helm-'));
  try {
    const chartCopy = join(work, 'chart');
    copyChart(opts.chartDir, chartCopy);
    const request: RendererRequest = {
      chart: '/chart',
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
      skipTests: opts.skipTests ?? false,
    };
    return await runRenderer(request, chartCopy, opts.chartDir, opts.limits, opts.wasmPath, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** What hack/tools/helm-renderer/main.go reads on stdin; `chart` is a path inside the sandbox. */
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
  skipTests: boolean;
  /** Print the guest's environment, arguments and working directory instead (sandbox tests). */
  probe?: boolean;
}

/**
 * One run of the renderer with `preopen` as its /chart directory and `scratch` (outside it) for
 * the request and output files. `shown` names the chart in errors. Exported for the sandbox tests.
 */
export async function runRenderer(
  request: RendererRequest,
  preopen: string,
  shown: string,
  limits: RenderLimits,
  wasmPath: string | undefined,
  scratch: string,
): Promise<string> {
  const { timeoutMs, memoryBytes } = limits;
  const module = await compiled(wasmPath ?? defaultWasmPath(), pagesFor(memoryBytes));
  const requestPath = join(scratch, 'request.json');
  const stdoutPath = join(scratch, 'stdout');
  const stderrPath = join(scratch, 'stderr');
  writeFileSync(requestPath, JSON.stringify({ ...request, memoryLimit: Math.floor(memoryBytes * 0.8) }), {
    mode: 0o600,
  });
  const outcome = await runWorker(
    { module, chartDir: preopen, requestPath, stdoutPath, stderrPath },
    timeoutMs,
  );
  const stderr = existsSync(stderrPath) ? readFileSync(stderrPath, 'utf8') : '';
  if (outcome === 'timeout') throw new HelmTimeoutError(shown, timeoutMs);
  if ('trap' in outcome) {
    if (/out of memory|memory access out of bounds|allocat/i.test(outcome.trap)) {
      throw new HelmMemoryError(shown, memoryBytes, outcome.trap);
    }
    throw new HelmRenderError(`rendering chart ${shown}: the renderer failed: ${outcome.trap}`);
  }
  if (outcome.code === 0) return readFileSync(stdoutPath, 'utf8');
  const oom = /^.*out of memory.*$/m.exec(stderr);
  if (oom) throw new HelmMemoryError(shown, memoryBytes, oom[0].trim());
  // main.go writes "Error: <message>\n" last; the message may span lines.
  const at = stderr.startsWith('Error: ') ? 0 : stderr.indexOf('\nError: ') + 1;
  if (outcome.code === 1 && (at > 0 || stderr.startsWith('Error: '))) {
    throw new HelmTemplateError(shown, stderr.slice(at + 'Error: '.length).replace(/\n$/, ''));
  }
  const tail = stderr.trim().split('\n').slice(-5).join('\n');
  throw new HelmRenderError(
    `rendering chart ${shown}: the renderer exited with code ${outcome.code}: ${tail}`,
  );
}

type Outcome = { code: number } | { trap: string } | 'timeout';

function runWorker(data: Record<string, unknown>, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // The guest's memory is the capped wasm memory, not the JS heap: the worker needs little.
    const worker = new Worker(WORKER, {
      workerData: data,
      env: {},
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    let settled: Outcome | undefined;
    const timer = setTimeout(() => {
      settled = 'timeout';
      void worker.terminate();
    }, timeoutMs);
    worker.on('message', (m: Outcome) => {
      settled ??= m;
    });
    worker.on('error', (err) => {
      settled ??= { trap: `${err.name}: ${err.message}` };
    });
    worker.on('exit', () => {
      clearTimeout(timer);
      if (settled) resolve(settled);
      else reject(new HelmRenderError('the Helm renderer worker stopped without an outcome'));
    });
  });
}
