import { createHash } from 'node:crypto';
import semver from 'semver';
import { parseDocument, stringify } from 'yaml';

/**
 * A Helm repository's index.yaml (helm.sh/helm/v3/pkg/repo IndexFile), read from an untrusted
 * server: size-limited, aliases bounded, nesting bounded, entries checked and put in a stable
 * order so the same index is the same bytes, whatever order the server wrote it in.
 */

/** Alias expansions a YAML document may make before it is refused as a bomb. */
export const INDEX_MAX_ALIASES = 100;
/** Deepest nesting an index may have. */
const INDEX_MAX_DEPTH = 64;

export class InvalidIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidIndexError';
  }
}

/** One chart version of the index. */
export interface ChartVersionEntry {
  name: string;
  version: string;
  urls: string[];
  /** sha256 hex of the chart package, when the index gives one. */
  digest?: string;
  [field: string]: unknown;
}

export interface HelmIndex {
  apiVersion: string;
  /** Chart name → its versions, highest first. */
  entries: Record<string, ChartVersionEntry[]>;
  generated?: string;
}

/** The index normalised, its bytes, and its revision (`sha256:<hex>` of those bytes). */
export interface NormalisedIndex {
  index: HelmIndex;
  text: string;
  revision: string;
  /** Entries left out because their version is not SemVer or their name does not match. */
  skipped: string[];
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > INDEX_MAX_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Object.values(value)) {
    max = Math.max(max, depthOf(child, depth + 1));
    if (max > INDEX_MAX_DEPTH) break;
  }
  return max;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** `value` with every mapping's keys in byte order: the same entries are the same bytes, however written. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys(value[key]);
  return out;
}

/** Parses YAML from an untrusted source: one document, aliases and nesting bounded. */
export function parseUntrustedYaml(text: string, what: string, maxBytes: number): unknown {
  if (Buffer.byteLength(text) > maxBytes) {
    throw new InvalidIndexError(`${what} is larger than the ${maxBytes}-byte limit`);
  }
  const doc = parseDocument(text, { prettyErrors: false, logLevel: 'error', uniqueKeys: false });
  const error = doc.errors[0];
  if (error) throw new InvalidIndexError(`${what} is not YAML: ${error.message.split('\n')[0]}`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: INDEX_MAX_ALIASES });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? '';
    if (/alias/i.test(message)) {
      throw new InvalidIndexError(`${what} expands too many YAML aliases (limit ${INDEX_MAX_ALIASES})`);
    }
    throw new InvalidIndexError(`${what} is not valid YAML: ${message}`);
  }
  if (depthOf(value) > INDEX_MAX_DEPTH) throw new InvalidIndexError(`${what} is nested too deeply`);
  return value;
}

/** A version Helm accepts (Masterminds semver is loose: `v1.2.3`), in node-semver's form; undefined if none. */
export function chartSemver(version: string): string | undefined {
  return semver.valid(version, { loose: true }) ?? undefined;
}

function byVersionDescending(a: ChartVersionEntry, b: ChartVersionEntry): number {
  return semver.rcompare(chartSemver(a.version)!, chartSemver(b.version)!, { loose: true });
}

/**
 * Reads an index.yaml: it must be a mapping with an apiVersion and a mapping of entries, each
 * a list of chart versions with a name, a SemVer version and URLs. Invalid versions are left out
 * (Helm skips them too); the rest are sorted, names ascending and versions highest first, and
 * each entry's fields by name.
 */
export function normaliseIndex(text: string, maxBytes: number): NormalisedIndex {
  const doc = parseUntrustedYaml(text, 'index.yaml', maxBytes);
  if (!isObject(doc)) throw new InvalidIndexError('index.yaml is not a mapping');
  if (typeof doc.apiVersion !== 'string' || !doc.apiVersion) {
    throw new InvalidIndexError('index.yaml has no apiVersion');
  }
  const rawEntries = doc.entries ?? {};
  if (!isObject(rawEntries)) throw new InvalidIndexError('index.yaml entries is not a mapping');
  const skipped: string[] = [];
  const entries: Record<string, ChartVersionEntry[]> = {};
  for (const name of Object.keys(rawEntries).sort()) {
    const list = rawEntries[name];
    if (list === null) continue;
    if (!Array.isArray(list)) throw new InvalidIndexError(`index.yaml entries.${name} is not a list`);
    const versions: ChartVersionEntry[] = [];
    for (const [i, raw] of list.entries()) {
      const where = `index.yaml entries.${name}[${i}]`;
      if (!isObject(raw)) throw new InvalidIndexError(`${where} is not a mapping`);
      const version = raw.version;
      if (typeof version !== 'string' || !chartSemver(version)) {
        skipped.push(`${name} ${String(version)}`);
        continue;
      }
      const urls = raw.urls ?? [];
      if (!Array.isArray(urls) || urls.some((u) => typeof u !== 'string')) {
        throw new InvalidIndexError(`${where} urls is not a list of strings`);
      }
      if (raw.digest !== undefined && typeof raw.digest !== 'string') {
        throw new InvalidIndexError(`${where} digest is not a string`);
      }
      versions.push(
        sortedKeys({
          ...raw,
          name: typeof raw.name === 'string' ? raw.name : name,
          version,
          urls,
        }) as ChartVersionEntry,
      );
    }
    versions.sort(byVersionDescending);
    entries[name] = versions;
  }
  const index: HelmIndex = { apiVersion: doc.apiVersion, entries };
  if (typeof doc.generated === 'string') index.generated = doc.generated;
  // No anchors in the output: an alias in the input becomes a copy, so no reader re-expands a bomb.
  const out = stringify(index, { aliasDuplicateObjects: false, lineWidth: 0 });
  if (Buffer.byteLength(out) > maxBytes) {
    throw new InvalidIndexError(`index.yaml expands to more than the ${maxBytes}-byte limit`);
  }
  const revision = `sha256:${createHash('sha256').update(out).digest('hex')}`;
  return { index, text: out, revision, skipped };
}

export class NoChartVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoChartVersionError';
  }
}

/** `range` when it is a SemVer range (`*` when empty), undefined otherwise. */
export function validVersionRange(range: string | undefined): string | undefined {
  const r = range?.trim() || '*';
  return semver.validRange(r, { loose: true }) === null ? undefined : r;
}

/**
 * The highest version of `chart` in the index that satisfies `range` (SemVer, `*` when empty;
 * pre-releases only when the range names one, as Helm does).
 */
export function selectChartVersion(
  index: HelmIndex,
  chart: string,
  range: string | undefined,
): ChartVersionEntry {
  const wanted = range?.trim() || '*';
  const versions = index.entries[chart];
  if (!versions?.length) throw new NoChartVersionError(`no chart named '${chart}' in the repository index`);
  const match = versions.find((v) => semver.satisfies(chartSemver(v.version)!, wanted, { loose: true }));
  if (!match) {
    throw new NoChartVersionError(
      `no version of chart '${chart}' satisfies '${wanted}' (the index has ${versions
        .slice(0, 5)
        .map((v) => v.version)
        .join(', ')}${versions.length > 5 ? ', …' : ''})`,
    );
  }
  return match;
}
