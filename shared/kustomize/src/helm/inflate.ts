// kustomize's HelmChartInflationGenerator (api/internal/builtins/HelmChartInflationGenerator.go at
// kustomize v5.8.0), with the chart rendered by a renderer the caller hands the build (Mooring's is
// Helm's own engine in a sandbox, @mooring/helm) instead of a `helm` binary. Charts come only from
// chartHome inside the build's root: nothing is pulled, as the render has no network.
import { join as joinOs, posix } from 'node:path';
import type { ConfinedFs } from '../confined-fs.ts';
import { fileInDir, normalizeRel } from '../confined-fs.ts';
import { KustomizeError } from '../errors.ts';
import { absorb } from '../generators.ts';
import type { Kustomization } from '../kustomization-file.ts';
import { isRemote, parseResources, parseYamlDocuments, type YamlLimits } from '../load-resources.ts';
import type { JsonObject, Resource } from '../resource.ts';
import { strategicMerge } from '../smp/strategic-merge.ts';
import type { HelmChart } from './helm-chart-spec.ts';

/** What `helm template` is asked for one chart; the renderer answers with the stream it prints. */
export interface HelmRenderRequest {
  /** The chart directory on disk (inside the build's root, symlinks resolved). */
  chartDir: string;
  /** The build's root on disk: where a link in the chart may lead (a chart linking to CRDs beside it). */
  linksWithin: string;
  /** The chart's path from the build's root, for messages. */
  chart: string;
  releaseName: string;
  namespace: string;
  /** Values documents (YAML or JSON text) in `-f` order. */
  values: string[];
  /** `--kube-version`; undefined when the kustomization sets none (the renderer picks a default). */
  kubeVersion?: string;
  /** `--api-versions`; undefined when the kustomization sets none. */
  apiVersions?: string[];
  includeCrds: boolean;
  skipTests: boolean;
}

/** Renders one chart as `helm template` prints it (hooks included: the build drops them for skipHooks). */
export type HelmRenderer = (request: HelmRenderRequest) => Promise<string>;

/** A chart's render failed (its templates, a limit, the renderer): the renderer's error is the cause. */
export class HelmInflationError extends KustomizeError {
  override name = 'HelmInflationError';
}

const defaultChartHome = 'charts';
const hookAnnotation = 'helm.sh/hook';
const mergeOptions = ['merge', 'override', 'replace'];

interface Where {
  fs: ConfinedFs;
  dir: string;
  rootOnly: boolean;
  limits: YamlLimits;
}

const joinRel = (dir: string, entry: string): string => {
  if (posix.isAbsolute(entry)) {
    throw new KustomizeError(`absolute path ${JSON.stringify(entry)} is not allowed: paths must be relative`);
  }
  return normalizeRel(dir === '' ? entry : `${dir}/${entry}`);
};

/** kustomize's absChartHome: chartHome, and below it `<name>-<version>` when both version and repo are set. */
function chartHomeOf(dir: string, chartHome: string, chart: HelmChart): string {
  const home = joinRel(dir, chartHome);
  return chart.version && chart.repo ? joinRel(home, `${chart.name}-${chart.version}`) : home;
}

/** Reads a file the kustomization names as kustomize's loader does (root restrictions apply). */
function load(w: Where, rel: string, what: string): string {
  if (isRemote(rel)) throw new KustomizeError(`${what} ${rel}: remote files are not supported`);
  const fromDir = w.dir === '' ? rel : posix.relative(w.dir, rel);
  return w.fs.readFile(fileInDir(w.dir, fromDir, w.rootOnly, w.fs)).toString('utf8');
}

/**
 * The values documents kustomize hands helm: the values file (default: the chart's own
 * values.yaml), with valuesInline merged into it (`override`: inline wins; `merge`: the file
 * wins; `replace`: inline alone), then each additionalValuesFiles entry.
 */
function valuesOf(w: Where, chart: HelmChart, chartRel: string): string[] {
  const merge = chart.valuesMerge || 'override';
  if (!mergeOptions.includes(merge)) {
    throw new KustomizeError(`valuesMerge must be one of [${mergeOptions.join(' ')}]`);
  }
  // Loaded first, as kustomize's validateArgs does, so a missing one fails before anything renders.
  const additional = (chart.additionalValuesFiles ?? []).map((f) =>
    load(w, joinRel(w.dir, f), 'additionalValuesFile'),
  );
  const valuesRel = chart.valuesFile ? joinRel(w.dir, chart.valuesFile) : `${chartRel}/values.yaml`;
  const inline = chart.valuesInline ?? {};
  let first: string;
  if (Object.keys(inline).length === 0) {
    first = load(w, valuesRel, 'valuesFile');
  } else if (merge === 'replace') {
    first = JSON.stringify(inline);
  } else {
    const text = load(w, valuesRel, 'valuesFile');
    const docs = parseYamlDocuments(text, valuesRel, w.limits);
    // kyaml.Parse finds no document in an empty (or comment-only) file, and kustomize stops there.
    if (docs.length === 0)
      throw new KustomizeError(`${valuesRel}: could not parse values file into rnode: EOF`);
    const fromFile = docs[0];
    const file: JsonObject =
      fromFile !== null && typeof fromFile === 'object' && !Array.isArray(fromFile) ? fromFile : {};
    // merge2.Merge(src, dest): src wins. kustomize passes (inline, file) for override, (file, inline) for merge.
    const merged =
      merge === 'override'
        ? strategicMerge(file, inline, undefined)
        : strategicMerge(inline, file, undefined);
    first = JSON.stringify(merged ?? {});
  }
  return [first, ...additional];
}

/**
 * kustomize passes the release name, else `--generate-name` (helm names the release
 * `<chart>-<unix seconds>`, another name every build) or `--name-template` (a sprig template
 * helm executes with no data). Mooring needs the same name on every render: a literal template
 * is that name; a template with actions, or neither field, is refused.
 */
function releaseNameOf(chart: HelmChart): string {
  if (chart.releaseName && chart.nameTemplate) {
    throw new KustomizeError(
      `helmCharts ${chart.name}: cannot set --name-template and also specify a name (releaseName and nameTemplate are both set)`,
    );
  }
  if (chart.releaseName) return chart.releaseName;
  if (chart.nameTemplate) {
    if (chart.nameTemplate.includes('{{')) {
      throw new KustomizeError(
        `helmCharts ${chart.name}: a nameTemplate with template actions is not supported (its name may differ on every render): set releaseName`,
      );
    }
    return chart.nameTemplate;
  }
  throw new KustomizeError(
    `helmCharts ${chart.name}: releaseName is not set: kustomize would let helm generate a new release name (${chart.name}-<unix time>) on every build; set releaseName`,
  );
}

function isHook(object: JsonObject): boolean {
  const metadata = object.metadata as JsonObject | undefined;
  const annotations = metadata?.annotations as JsonObject | undefined;
  return annotations !== undefined && annotations !== null && Object.hasOwn(annotations, hookAnnotation);
}

/** The renderer's error as one sentence about the chart; the chart's place on disk becomes its path in the build. */
function renderFailure(err: unknown, request: HelmRenderRequest): HelmInflationError {
  const message = (err instanceof Error ? err.message : String(err))
    .split(request.chartDir)
    .join(request.chart);
  return new HelmInflationError(
    `helmCharts: chart ${request.chart} (release ${request.releaseName}): ${message}`,
    { cause: err },
  );
}

/**
 * Inflates the kustomization's helmCharts in order and absorbs their resources into `ra`, after
 * the ConfigMap and Secret generators, as kustomize's builtin generators run. Each resource is
 * marked helm-generated: kustomize's namespace transformers leave it alone (helm set its namespace).
 */
export async function inflateHelmCharts(
  w: Where,
  k: Kustomization,
  ra: Resource[],
  renderer: HelmRenderer | undefined,
): Promise<void> {
  const charts = k.helmCharts ?? [];
  if (charts.length === 0) return;
  if (renderer === undefined) {
    throw new KustomizeError(`${k.fileName}: helmCharts need a Helm renderer, and this build has none`);
  }
  for (const chart of charts) {
    if (!chart.name) throw new KustomizeError('chart name cannot be empty');
    const chartRel = joinRel(
      chartHomeOf(w.dir, k.helmGlobals?.chartHome || defaultChartHome, chart),
      chart.name,
    );
    if (!w.fs.isDir(chartRel)) {
      throw new KustomizeError(
        chart.repo
          ? `helmCharts ${chart.name}: the chart is not in chartHome at ${chartRel}, and Mooring renders without network: vendor the chart there (helm pull ${chart.name} --repo ${chart.repo}${chart.version ? ` --version ${chart.version}` : ''} --untar --untardir <chartHome>${chart.version ? `/${chart.name}-${chart.version}` : ''}) or render it from a HelmChart source`
          : `helmCharts ${chart.name}: no repo specified for pull, no chart found at ${chartRel}`,
      );
    }
    const values = valuesOf(w, chart, chartRel);
    const request: HelmRenderRequest = {
      chartDir: joinOs(w.fs.root, w.fs.realPath(chartRel) ?? chartRel),
      linksWithin: w.fs.root,
      chart: chartRel,
      releaseName: releaseNameOf(chart),
      namespace: chart.namespace || k.namespace || 'default',
      values,
      includeCrds: chart.includeCRDs === true,
      skipTests: chart.skipTests === true,
    };
    if (chart.kubeVersion) request.kubeVersion = chart.kubeVersion;
    if (chart.apiVersions && chart.apiVersions.length > 0) request.apiVersions = chart.apiVersions;
    let output: string;
    try {
      output = await renderer(request);
    } catch (err) {
      throw renderFailure(err, request);
    }
    for (const object of parseResources(output, chartRel, w.limits)) {
      // `helm template --no-hooks` prints no hook, and every document with the hook annotation is one.
      if (chart.skipHooks && isHook(object)) continue;
      absorb(ra, {
        object,
        previousIds: [],
        origin: { path: '', configuredIn: k.fileName, configuredBy: 'HelmChartInflationGenerator' },
        helmGenerated: true,
      });
    }
  }
}
