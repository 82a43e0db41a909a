// The chart part of a release record from an unpacked chart folder, as Helm's directory loader
// (pkg/chart/loader, v3.22.0) fills chart.Chart: Chart.yaml as Metadata, values.yaml parsed,
// templates/ apart from the other files, .helmignore honoured, and subcharts under charts/ left
// out, since Helm does not marshal a chart's dependencies into the record either.
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { HelmIgnore } from './helm-ignore.ts';
import type {
  ChartFileRecord,
  ChartLockRecord,
  ChartMetadataRecord,
  ChartRecord,
  DependencyRecord,
  JsonObject,
  JsonValue,
  MaintainerRecord,
} from './release-record.ts';

/** Helm's MaxDecompressedFileSize: the largest file its loader reads. */
const MAX_FILE_BYTES = 5 << 20;

export class ChartRecordError extends Error {
  override name = 'ChartRecordError';
}

/**
 * YAML as Helm's sigs.k8s.io/yaml reads it: YAML 1.1 (yes/no/on/off are booleans, 012 is octal,
 * `<<` merges) with timestamps kept as text.
 */
function parseYaml(text: string, file: string): unknown {
  try {
    return parse(text, {
      version: '1.1',
      merge: true,
      maxAliasCount: 1000,
      customTags: (tags) =>
        tags.filter((t) => (typeof t === 'object' ? t.tag !== 'tag:yaml.org,2002:timestamp' : true)),
    });
  } catch (err) {
    throw new ChartRecordError(`cannot load ${file}: ${(err as Error).message}`);
  }
}

/** A scalar decoded into a Go string field: numbers and booleans become their text. */
function text(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function texts(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((v) => text(v) ?? '');
}

function textMap(value: unknown): Record<string, string> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) out[k] = text(v) ?? '';
  return out;
}

const asObject = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function dependencies(value: unknown): DependencyRecord[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((raw) => {
    const d = asObject(raw);
    const dep: DependencyRecord = { name: text(d.name) ?? '', repository: text(d.repository) ?? '' };
    if (text(d.version)) dep.version = text(d.version);
    if (text(d.condition)) dep.condition = text(d.condition);
    if (texts(d.tags)) dep.tags = texts(d.tags);
    if (d.enabled === true) dep.enabled = true;
    if (Array.isArray(d['import-values'])) dep['import-values'] = d['import-values'] as JsonValue[];
    if (text(d.alias)) dep.alias = text(d.alias);
    return dep;
  });
}

function metadataOf(value: unknown): ChartMetadataRecord {
  const m = asObject(value);
  const out: ChartMetadataRecord = {};
  for (const key of [
    'name',
    'home',
    'version',
    'description',
    'icon',
    'apiVersion',
    'condition',
    'tags',
  ] as const) {
    const v = text(m[key]);
    if (v !== undefined) out[key] = v;
  }
  const sources = texts(m.sources);
  if (sources) out.sources = sources;
  const keywords = texts(m.keywords);
  if (keywords) out.keywords = keywords;
  if (Array.isArray(m.maintainers)) {
    out.maintainers = m.maintainers.map((raw) => {
      const x = asObject(raw);
      const m: MaintainerRecord = {};
      for (const key of ['name', 'email', 'url'] as const) {
        const v = text(x[key]);
        if (v !== undefined) m[key] = v;
      }
      return m;
    });
  }
  for (const key of ['appVersion', 'kubeVersion', 'type'] as const) {
    const v = text(m[key]);
    if (v !== undefined) out[key] = v;
  }
  if (m.deprecated === true) out.deprecated = true;
  const annotations = textMap(m.annotations);
  if (annotations) out.annotations = annotations;
  const deps = dependencies(m.dependencies);
  if (deps) out.dependencies = deps;
  // Helm 2 charts had no apiVersion; the loader reads them as v1.
  if (!out.apiVersion) out.apiVersion = 'v1';
  return out;
}

function lockOf(value: unknown): ChartLockRecord {
  const l = asObject(value);
  return {
    generated: text(l.generated) ?? '',
    digest: text(l.digest) ?? '',
    dependencies: dependencies(l.dependencies) ?? null,
  };
}

interface LoadedFile {
  name: string;
  data: Buffer;
}

/** The chart's files in Helm's walk order (each folder sorted by name), .helmignore applied. */
function walkChart(chartDir: string): LoadedFile[] {
  const root = realpathSync(chartDir);
  let rules: HelmIgnore;
  try {
    const ignoreFile = join(root, '.helmignore');
    rules = new HelmIgnore(
      statSync(ignoreFile, { throwIfNoEntry: false })?.isFile() ? readFileSync(ignoreFile, 'utf8') : '',
    );
  } catch (err) {
    throw new ChartRecordError(`chart ${chartDir}: ${(err as Error).message}`);
  }
  const out: LoadedFile[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(dir, name);
      // Helm's loader follows links (internal/sympath), as readChartFiles does.
      const st = lstatSync(full).isSymbolicLink() ? statSync(full) : lstatSync(full);
      if (st.isDirectory()) {
        if (!rules.ignores(path, true)) walk(full, path);
        continue;
      }
      if (rules.ignores(path, false)) continue;
      if (!st.isFile()) throw new ChartRecordError(`chart ${chartDir}: cannot load irregular file ${path}`);
      if (st.size > MAX_FILE_BYTES)
        throw new ChartRecordError(
          `chart ${chartDir}: file ${path} is larger than Helm's ${MAX_FILE_BYTES} byte limit`,
        );
      let data = readFileSync(full);
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3);
      out.push({ name: path, data });
    }
  };
  walk(root, '');
  return out;
}

const fileRecord = (f: LoadedFile): ChartFileRecord => ({ name: f.name, data: f.data.toString('base64') });

/**
 * The chart part of a release record for the unpacked chart at `chartDir`, as Helm's loader
 * builds it: Chart.yaml as metadata, Chart.lock as lock, values.yaml parsed, values.schema.json,
 * templates/ and the other files (README, LICENSE, crds/, .helmignore, ...) as base64.
 */
export function chartRecordOf(chartDir: string): ChartRecord {
  const files = walkChart(chartDir);
  const chartYaml = files.find((f) => f.name === 'Chart.yaml');
  if (!chartYaml) throw new ChartRecordError(`chart ${chartDir}: Chart.yaml file is missing`);
  const record: ChartRecord = {
    metadata: metadataOf(parseYaml(chartYaml.data.toString('utf8'), 'Chart.yaml')),
    lock: null,
    templates: null,
    values: null,
    schema: null,
    files: null,
  };
  const metadata = record.metadata as ChartMetadataRecord;
  const v1 = metadata.apiVersion === 'v1';
  const templates: ChartFileRecord[] = [];
  const others: ChartFileRecord[] = [];
  for (const f of files) {
    const body = (): unknown => parseYaml(f.data.toString('utf8'), f.name);
    if (f.name === 'Chart.yaml') continue;
    if (f.name === 'Chart.lock') record.lock = lockOf(body());
    else if (f.name === 'values.yaml') {
      const parsed = body();
      // An empty values.yaml decodes to a nil map in Go, which marshals as null.
      if (parsed === null || parsed === undefined) record.values = null;
      else if (typeof parsed !== 'object' || Array.isArray(parsed))
        throw new ChartRecordError(`chart ${chartDir}: cannot load values.yaml: it is not a map`);
      else record.values = parsed as JsonObject;
    } else if (f.name === 'values.schema.json') record.schema = f.data.toString('base64');
    else if (f.name === 'requirements.yaml') {
      const deps = dependencies(asObject(body()).dependencies);
      if (deps) metadata.dependencies = deps;
      if (v1) others.push(fileRecord(f));
    } else if (f.name === 'requirements.lock') {
      record.lock = lockOf(body());
      if (v1) others.push(fileRecord(f));
    } else if (f.name.startsWith('templates/')) templates.push(fileRecord(f));
    else if (f.name.startsWith('charts/')) {
      // Subcharts are loaded as dependencies, which the record does not hold; provenance files stay.
      if (f.name.endsWith('.prov')) others.push(fileRecord(f));
    } else others.push(fileRecord(f));
  }
  if (templates.length) record.templates = templates;
  if (others.length) record.files = others;
  return record;
}
