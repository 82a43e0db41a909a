import { cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { packDirectory } from '@mooring/artifact';
import semver from 'semver';
import { parseDocument, stringify } from 'yaml';
import { chartSemver, InvalidIndexError, parseUntrustedYaml } from './index-file.ts';

/** Largest Chart.yaml or values file read (Flux's --helm-chart-file-max-size). */
export const CHART_FILE_MAX_BYTES = 5 * 1024 * 1024;

export class InvalidChartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidChartError';
  }
}

export interface ChartMeta {
  name: string;
  version: string;
}

/** `rel` inside `root`, or an InvalidChartError: no absolute paths, no `..` out of the root. */
export function confined(root: string, rel: string, what: string): string {
  const clean = normalize(rel.replace(/^\.\//, ''));
  if (isAbsolute(rel) || clean === '..' || clean.startsWith(`..${sep}`)) {
    throw new InvalidChartError(`${what} '${rel}' leaves the source`);
  }
  return join(root, clean);
}

async function readSmallFile(path: string, what: string): Promise<string | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    return undefined;
  }
  if (!info.isFile()) return undefined;
  if (info.size > CHART_FILE_MAX_BYTES) {
    throw new InvalidChartError(`${what} is ${info.size} bytes, over the ${CHART_FILE_MAX_BYTES}-byte limit`);
  }
  return readFile(path, 'utf8');
}

function parse(text: string, what: string): unknown {
  try {
    return parseUntrustedYaml(text, what, CHART_FILE_MAX_BYTES);
  } catch (err) {
    if (err instanceof InvalidIndexError) throw new InvalidChartError(err.message);
    throw err;
  }
}

/** The chart's name and version from its Chart.yaml; a folder without one is no chart. */
export async function readChartMeta(chartDir: string, where: string): Promise<ChartMeta> {
  const text = await readSmallFile(join(chartDir, 'Chart.yaml'), `${where}/Chart.yaml`);
  if (text === undefined) throw new InvalidChartError(`no Chart.yaml in ${where}`);
  const doc = parse(text, `${where}/Chart.yaml`) as Record<string, unknown> | null;
  const name = doc?.name;
  const version = doc?.version;
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    throw new InvalidChartError(`${where}/Chart.yaml has no valid name`);
  }
  if (typeof version !== 'string' || !chartSemver(version)) {
    throw new InvalidChartError(`${where}/Chart.yaml version '${String(version)}' is not SemVer`);
  }
  return { name, version };
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Helm's values merge: mappings merged key by key, the later file winning; anything else replaced. */
export function mergeValues(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const mine = out[key];
    out[key] = isMap(mine) && isMap(value) ? mergeValues(mine, value) : value;
  }
  return out;
}

/**
 * `files` (relative to `root`) merged in order into one values document; a missing file fails
 * unless `ignoreMissing`. Returns the YAML and the files actually merged.
 */
export async function mergeValuesFiles(
  root: string,
  files: readonly string[],
  ignoreMissing: boolean,
): Promise<{ yaml: string; merged: string[] }> {
  let values: Record<string, unknown> = {};
  const merged: string[] = [];
  for (const file of files) {
    const text = await readSmallFile(confined(root, file, 'values file'), `values file ${file}`);
    if (text === undefined) {
      if (ignoreMissing) continue;
      throw new InvalidChartError(`values file '${file}' not found`);
    }
    const doc = parse(text, `values file ${file}`);
    if (doc !== null && doc !== undefined && !isMap(doc)) {
      throw new InvalidChartError(`values file '${file}' is not a mapping`);
    }
    values = mergeValues(values, (doc as Record<string, unknown> | null) ?? {});
    merged.push(file);
  }
  return { yaml: stringify(values, { aliasDuplicateObjects: false }), merged };
}

/** A `dependencies` entry of Chart.yaml. */
export interface ChartDependency {
  name: string;
  version?: string;
  repository?: string;
}

/** The `dependencies` of the chart's Chart.yaml (apiVersion v2), checked for their shape. */
export async function readDependencies(chartDir: string, where: string): Promise<ChartDependency[]> {
  const text = await readSmallFile(join(chartDir, 'Chart.yaml'), `${where}/Chart.yaml`);
  const doc =
    text === undefined ? null : (parse(text, `${where}/Chart.yaml`) as Record<string, unknown> | null);
  const deps = doc?.dependencies;
  if (deps === undefined || deps === null) return [];
  if (!Array.isArray(deps)) throw new InvalidChartError(`${where}/Chart.yaml dependencies is not a list`);
  return deps.map((d, i) => {
    if (!isMap(d) || typeof d.name !== 'string' || !d.name) {
      throw new InvalidChartError(`${where}/Chart.yaml dependencies[${i}] has no name`);
    }
    return {
      name: d.name,
      version: typeof d.version === 'string' ? d.version : undefined,
      repository: typeof d.repository === 'string' ? d.repository : undefined,
    };
  });
}

async function isVendored(chartsDir: string, name: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(chartsDir);
  } catch {
    return false;
  }
  return entries.some((e) => e === name || (e.startsWith(`${name}-`) && /\.tgz$/.test(e)));
}

/** How deep `file://` dependencies may nest. */
const MAX_DEPENDENCY_DEPTH = 5;

/**
 * Vendors a chart's `file://` dependencies into its `charts/` folder, as Flux's dependency manager
 * does for a chart from Git: each one's folder (inside the source, its version within the
 * constraint) is copied to `charts/<name>/`, its own local dependencies likewise. A dependency
 * already in `charts/` is kept. A remote one (https://, oci://, an alias `@repo`) that is not
 * vendored is refused: resolving those from HelmRepositories is not done yet.
 */
export async function vendorLocalDependencies(
  sourceChartDir: string,
  targetChartDir: string,
  sourceRoot: string,
  where: string,
  depth = 0,
): Promise<string[]> {
  const vendored: string[] = [];
  for (const dep of await readDependencies(sourceChartDir, where)) {
    const chartsDir = join(targetChartDir, 'charts');
    if (await isVendored(chartsDir, dep.name)) continue;
    const repo = dep.repository ?? '';
    if (!repo.startsWith('file://')) {
      throw new InvalidChartError(
        `${where}: dependency '${dep.name}'${repo ? ` from '${repo}'` : ''} is not in charts/; only file:// dependencies are resolved yet: vendor it (helm dependency build) and commit charts/`,
      );
    }
    if (depth >= MAX_DEPENDENCY_DEPTH) {
      throw new InvalidChartError(`${where}: file:// dependencies nest deeper than ${MAX_DEPENDENCY_DEPTH}`);
    }
    const from = resolve(sourceChartDir, repo.slice('file://'.length));
    const rel = relative(sourceRoot, from);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new InvalidChartError(`${where}: dependency '${dep.name}' at '${repo}' leaves the source`);
    }
    const depWhere = rel || '.';
    const meta = await readChartMeta(from, depWhere);
    if (meta.name !== dep.name) {
      throw new InvalidChartError(`${where}: dependency '${dep.name}' at '${repo}' is chart '${meta.name}'`);
    }
    const wanted = dep.version?.trim();
    if (wanted && !semver.satisfies(chartSemver(meta.version)!, wanted, { loose: true })) {
      throw new InvalidChartError(
        `${where}: dependency '${dep.name}' at '${repo}' is version ${meta.version}, not within '${wanted}'`,
      );
    }
    const target = join(chartsDir, dep.name);
    await mkdir(chartsDir, { recursive: true });
    await cp(from, target, { recursive: true, dereference: false, verbatimSymlinks: true });
    vendored.push(dep.name);
    await vendorLocalDependencies(from, target, sourceRoot, depWhere, depth + 1);
  }
  return vendored;
}

export interface PackageChartOptions {
  /** The chart's folder (with Chart.yaml). */
  chartDir: string;
  name: string;
  /** Written into Chart.yaml when it differs from the chart's own (a `+<revision>` suffix). */
  version?: string;
  /** Replaces values.yaml. */
  values?: string;
  /** A chart from a Git/OCI tree: its `file://` dependencies are vendored from inside this root. */
  sourceRoot?: string;
  /** Scratch folder the package is assembled in; must not exist. */
  work: string;
  outFile: string;
  limits: { maxFileBytes: number; maxTotalBytes: number };
}

/**
 * Packages a chart as `helm package` lays it out (`<name>/Chart.yaml`, …) in the repository's
 * deterministic tar.gz: sorted entries, zero times and owners, normalised modes.
 */
export async function packageChart(options: PackageChartOptions): Promise<{ digest: string; size: number }> {
  const target = join(options.work, options.name);
  await mkdir(options.work, { recursive: true });
  await cp(options.chartDir, target, { recursive: true, dereference: false, verbatimSymlinks: true });
  if (options.version !== undefined) {
    const file = join(target, 'Chart.yaml');
    const doc = parseDocument(await readFile(file, 'utf8'));
    if (doc.get('version') !== options.version) {
      doc.set('version', options.version);
      await writeFile(file, doc.toString());
    }
  }
  if (options.values !== undefined) await writeFile(join(target, 'values.yaml'), options.values);
  if (options.sourceRoot !== undefined) {
    await vendorLocalDependencies(options.chartDir, target, options.sourceRoot, options.name);
  }
  const packed = await packDirectory(options.work, options.outFile, {
    ...options.limits,
    filter: (rel) => rel === `${options.name}/.git` || rel.startsWith(`${options.name}/.git/`),
  });
  return { digest: packed.digest, size: packed.size };
}
