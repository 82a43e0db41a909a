// The renderer a build's `helmCharts:` go through, for the operator and the CLI alike: Helm's own
// engine in its sandbox (@mooring/helm renderChart: WebAssembly, no network, no environment, only
// a copy of the chart), under the operator's limits. It is given the chart and values, never a
// credential; .Capabilities come from the target cluster's discovery when the kustomization
// sets no kubeVersion or apiVersions.
import { type LookupFunction, renderChart } from '@mooring/helm';
import type { HelmRenderer, HelmRenderRequest } from '@mooring/kustomize';

/** A render's time and memory caps (`--helm-render-timeout`, `--helm-render-memory`). */
export interface HelmRenderLimits {
  timeoutMs: number;
  memoryBytes: number;
}

export const defaultHelmRenderLimits: HelmRenderLimits = {
  timeoutMs: 120_000,
  memoryBytes: 512 * 1024 * 1024,
};

/** What Helm's `.Capabilities` report: the cluster's version and every group/version and group/version/Kind it serves. */
export interface HelmCapabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/** Where the build's Helm renders run and what they may use. */
export interface HelmRenderSettings {
  limits: HelmRenderLimits;
  /** The target cluster's capabilities, read only when a chart renders; none offline (a released helm's defaults). */
  capabilities?: () => Promise<HelmCapabilities>;
  /** Answers Helm's `lookup` (read-only, from the target cluster); without it lookup finds nothing, as in `helm template`. */
  lookup?: LookupFunction;
  /** The renderer module, when not @mooring/helm's default (the CLI's bundle lives elsewhere). */
  wasmPath?: string;
}

/**
 * A renderer for one build: renderChart with the limits, the kustomization's kubeVersion and
 * apiVersions else the target's. The same request is rendered once (a build that meets an
 * encrypted file builds again after decrypting it).
 */
export function helmRenderer(settings: HelmRenderSettings): HelmRenderer {
  const done = new Map<string, Promise<string>>();
  return (request: HelmRenderRequest) => {
    const key = JSON.stringify(request);
    let pending = done.get(key);
    if (!pending) {
      pending = renderOnce(request, settings);
      done.set(key, pending);
    }
    return pending;
  };
}

async function renderOnce(request: HelmRenderRequest, settings: HelmRenderSettings): Promise<string> {
  const needsCapabilities = request.kubeVersion === undefined || request.apiVersions === undefined;
  const target = needsCapabilities && settings.capabilities ? await settings.capabilities() : undefined;
  const kubeVersion = request.kubeVersion ?? target?.kubeVersion;
  const apiVersions = request.apiVersions ?? target?.apiVersions;
  return renderChart({
    chartDir: request.chartDir,
    linksWithin: request.linksWithin,
    releaseName: request.releaseName,
    namespace: request.namespace,
    values: request.values,
    ...(kubeVersion !== undefined ? { kubeVersion } : {}),
    ...(apiVersions !== undefined ? { apiVersions } : {}),
    includeCrds: request.includeCrds,
    skipTests: request.skipTests,
    limits: settings.limits,
    ...(settings.lookup !== undefined ? { lookup: settings.lookup } : {}),
    ...(settings.wasmPath !== undefined ? { wasmPath: settings.wasmPath } : {}),
  });
}
