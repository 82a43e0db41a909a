// The `helmCharts:` and `helmGlobals:` fields of a kustomization, read as kustomize v5.8.0 reads
// them (api/types/helmchartargs.go): Go's json decoder, so unknown fields are errors and keys match
// case-insensitively. The legacy `helmChartInflationGenerator:` list folds into helmCharts as
// kustomize's FixKustomization does (types.SplitHelmParameters).
import { KustomizeError } from '../errors.ts';
import type { JsonObject, JsonValue } from '../resource.ts';
import { canonicalKeys } from '../transformers/config.ts';

/** kustomize's types.HelmGlobals. */
export interface HelmGlobals {
  chartHome?: string;
  /** Accepted and unused: the renderer reads no Helm configuration. */
  configHome?: string;
}

/** kustomize's types.HelmChart (the fields of HelmChartInflationGenerator). */
export interface HelmChart {
  name: string;
  version?: string;
  repo?: string;
  releaseName?: string;
  namespace?: string;
  additionalValuesFiles?: string[];
  valuesFile?: string;
  valuesInline?: JsonObject;
  valuesMerge?: string;
  includeCRDs?: boolean;
  skipHooks?: boolean;
  apiVersions?: string[];
  kubeVersion?: string;
  nameTemplate?: string;
  skipTests?: boolean;
  debug?: boolean;
  devel?: boolean;
}

const chartFields = [
  'name',
  'version',
  'repo',
  'releaseName',
  'namespace',
  'additionalValuesFiles',
  'valuesFile',
  'valuesInline',
  'valuesMerge',
  'includeCRDs',
  'skipHooks',
  'apiVersions',
  'kubeVersion',
  'nameTemplate',
  'skipTests',
  'debug',
  'devel',
] as const;
const stringFields = new Set([
  'name',
  'version',
  'repo',
  'releaseName',
  'namespace',
  'valuesFile',
  'valuesMerge',
  'kubeVersion',
  'nameTemplate',
]);
const boolFields = new Set(['includeCRDs', 'skipHooks', 'skipTests', 'debug', 'devel']);
const listFields = new Set(['additionalValuesFiles', 'apiVersions']);

const invalid = (where: string, what: string): never => {
  throw new KustomizeError(`invalid Kustomization: ${where} ${what}`);
};

function typed(o: JsonObject, where: string): void {
  for (const [key, value] of Object.entries(o)) {
    const at = `${where}.${key}`;
    if (stringFields.has(key) && typeof value !== 'string') invalid(at, 'must be a string');
    if (boolFields.has(key) && typeof value !== 'boolean') invalid(at, 'must be a boolean');
    if (listFields.has(key)) {
      if (!Array.isArray(value)) invalid(at, 'must be a list');
      (value as JsonValue[]).forEach((v, i) => {
        if (typeof v !== 'string') invalid(`${at}[${i}]`, 'must be a string');
      });
    }
    if (key === 'valuesInline' && (typeof value !== 'object' || Array.isArray(value))) {
      invalid(at, 'must be a mapping');
    }
  }
}

/** One `helmCharts:` entry. */
export function parseHelmChart(value: JsonValue, where: string): HelmChart {
  const o = canonicalKeys(value, chartFields, `invalid Kustomization: ${where}`);
  typed(o, where);
  return { name: '', ...o } as unknown as HelmChart;
}

/** The `helmGlobals:` mapping. */
export function parseHelmGlobals(value: JsonValue, where: string): HelmGlobals {
  const o = canonicalKeys(value, ['chartHome', 'configHome'], `invalid Kustomization: ${where}`);
  typed(o, where);
  for (const [key, v] of Object.entries(o))
    if (typeof v !== 'string') invalid(`${where}.${key}`, 'must be a string');
  return o as HelmGlobals;
}

/** A deprecated `helmChartInflationGenerator:` entry (types.HelmChartArgs). */
const legacyFields = [
  'chartName',
  'chartVersion',
  'chartRepoUrl',
  'chartHome',
  'chartRepoName',
  'helmBin',
  'helmHome',
  'values',
  'valuesLocal',
  'valuesMerge',
  'releaseName',
  'releaseNamespace',
  'extraArgs',
] as const;

/**
 * The helmCharts and helmGlobals of a kustomization file's raw fields, the legacy list folded in
 * as FixKustomization does: its charts join the end of helmCharts, and its last non-empty chartHome
 * and helmHome become helmGlobals only when the file sets no helmGlobals.
 */
export function readHelmFields(doc: JsonObject): { charts?: HelmChart[]; globals?: HelmGlobals } {
  const out: { charts?: HelmChart[]; globals?: HelmGlobals } = {};
  const raw = doc.helmCharts;
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) invalid('helmCharts', 'must be a list');
    out.charts = (raw as JsonValue[]).map((c, i) => parseHelmChart(c, `helmCharts[${i}]`));
  }
  if (doc.helmGlobals !== undefined && doc.helmGlobals !== null) {
    out.globals = parseHelmGlobals(doc.helmGlobals, 'helmGlobals');
  }
  const legacy = doc.helmChartInflationGenerator;
  if (legacy !== undefined && legacy !== null) {
    if (!Array.isArray(legacy)) invalid('helmChartInflationGenerator', 'must be a list');
    const globals: HelmGlobals = {};
    const charts = (legacy as JsonValue[]).map((entry, i): HelmChart => {
      const where = `helmChartInflationGenerator[${i}]`;
      const o = canonicalKeys(entry, legacyFields, `invalid Kustomization: ${where}`);
      const s = (key: string): string | undefined => {
        const v = o[key];
        if (v !== undefined && typeof v !== 'string') invalid(`${where}.${key}`, 'must be a string');
        return (v as string | undefined) || undefined;
      };
      if (s('chartHome')) globals.chartHome = s('chartHome');
      if (s('helmHome')) globals.configHome = s('helmHome');
      const chart: HelmChart = { name: s('chartName') ?? '' };
      const set = <K extends keyof HelmChart>(key: K, v: HelmChart[K] | undefined): void => {
        if (v !== undefined) chart[key] = v;
      };
      set('version', s('chartVersion'));
      set('repo', s('chartRepoUrl'));
      set('valuesFile', s('values'));
      set('valuesMerge', s('valuesMerge'));
      set('releaseName', s('releaseName'));
      if (o.valuesLocal !== undefined) {
        if (typeof o.valuesLocal !== 'object' || Array.isArray(o.valuesLocal)) {
          invalid(`${where}.valuesLocal`, 'must be a mapping');
        }
        chart.valuesInline = o.valuesLocal as JsonObject;
      }
      return chart;
    });
    out.charts = [...(out.charts ?? []), ...charts];
    if (out.globals === undefined && (globals.chartHome || globals.configHome)) out.globals = globals;
  }
  return out;
}
