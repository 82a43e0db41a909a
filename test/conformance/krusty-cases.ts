// The krusty cases: kustomize's own api/krusty/*_test.go, dumped by hack/gen-krusty-cases.ts into
// test/conformance/krusty/cases/<file>/<case>/ (see krusty/README.md), and how Mooring is run on
// them. Shared by test/conformance/krusty.test.ts and hack/krusty-report.ts.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfinedFs } from '@mooring/kustomize';
import * as mooring from '@mooring/kustomize';
import { parse, parseAllDocuments } from 'yaml';
import { helmRenderer } from '../../operators/kustomize/src/render/helm-renderer.ts';

const HELM_LIMITS = { timeoutMs: 180_000, memoryBytes: 1 << 30 };

/** The module whose krusty tests the cases come from (the api/ tree of kustomize/v5.8.0). */
export const KRUSTY_MODULE = 'sigs.k8s.io/kustomize/api@v0.21.0';
export const KRUSTY_DIR = fileURLToPath(new URL('./krusty/', import.meta.url));
export const CASES_DIR = join(KRUSTY_DIR, 'cases');
export const KNOWN_GAPS_JSON = join(KRUSTY_DIR, 'known-gaps.json');
export const KNOWN_GAPS_MD = join(KRUSTY_DIR, 'known-gaps.md');

/** krusty.Options of the Run call, as the dump recorded them. */
export interface CaseOptions {
  /** `none` is the harness default (input order); the CLI's default is `unspecified` (legacy). */
  reorder: 'none' | 'legacy' | 'unspecified';
  addManagedbyLabel: boolean;
  /** LoadRestrictionsRootOnly | LoadRestrictionsNone */
  loadRestrictions: string;
  plugins: {
    /** PluginRestrictionsBuiltinsOnly | PluginRestrictionsNone */
    pluginRestrictions: string;
    bpLoadingOptions: string;
    fnExec: boolean;
    fnNetwork: boolean;
    fnMounts: number;
    helmEnabled: boolean;
    helmCommand?: string;
  };
}

/** Why a case is not scored: what it needs that a Mooring build never has, or a Go test that did not pass. */
export type Need = 'remote' | 'helm' | 'plugins';

/** case.json */
export interface CaseRecord {
  /** `<file stem>/<test name>[-k]`, the directory under cases/. */
  id: string;
  file: string;
  /** t.Name() of the test that made the call. */
  test: string;
  /** That test's result in the instrumented `go test` run. */
  goTest: string;
  /** The path built, relative to input/. */
  entry: string;
  fs: 'memory' | 'disk';
  options: CaseOptions;
  expects: 'output' | 'error';
  /**
   * Whether the test compared the output with its literal expectation through the harness:
   * `equal`, `tweaked` (after a tweak function), `differs` (then the Go test failed), `no`
   * (it checked it otherwise, or not at all; errors are always `no`).
   */
  asserted: 'equal' | 'tweaked' | 'differs' | 'no';
  needs: Need[];
  /** Empty directories of input/ (`.` for input/ itself), which git does not keep: the runner recreates them. */
  emptyDirs?: string[];
  /**
   * Set when not scored: a Need, `go-test-fail`/`go-test-skip`/`go-test-unknown` (the dump is not
   * known to be what the test meant), `outside-fs` (the path is not in the dumped tree), or
   * `binary-disagrees` (bin/kustomize on the dumped tree gives another result).
   */
  excluded?: string;
  /**
   * bin/kustomize build on the dumped tree with the same options: `agrees` (same output, or fails
   * as the dump did), `differs`, `errors` (fails where the dump built), `unchecked`.
   */
  binary: 'agrees' | 'differs' | 'errors' | 'unchecked';
  /** Present when the CLI-default order (legacy) gives another result: expected-cli.yaml / expected-cli-error.txt. */
  cliDefault?: 'output' | 'error';
}

/** cases/index.json */
export interface KrustyIndex {
  module: string;
  /** api/krusty/*_test.go files, and top-level tests `go test` ran. */
  testFiles: number;
  tests: number;
  /** Top-level tests that made no Kustomizer.Run call: skipped (Helm missing) or testing other APIs. */
  /** Tests defined in the files that `go test` never ran (a build tag keeps their file out). */
  testsNotRun: { test: string; file: string }[];
  testsWithoutCases: { test: string; file: string; result: string; skip?: string; needs?: Need }[];
  cases: { id: string; file: string; expects: string; excluded?: string; binary: string }[];
}

const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
/** A list item or an openapi `path:` that is a URL (a Helm chart's `repo:` counts as helm, not remote). */
const REMOTE =
  /^\s*-?\s*(?:path:\s*)?['"]?(?:https?:\/\/|file:\/\/|git::|ssh:\/\/|git@|(?:github|gitlab|bitbucket)\.(?:com|org)\/)/m;

/** The plugin configs a kustomization names in generators/transformers/validators, as parsed documents. */
function pluginConfigs(kDir: string, k: Record<string, unknown>, tree: Map<string, string>): unknown[] {
  const docs: unknown[] = [];
  const parseAll = (text: string): void => {
    for (const d of parseAllDocuments(text)) {
      try {
        docs.push(d.toJS());
      } catch {
        docs.push({}); // unparsable: counts as a non-builtin config
      }
    }
  };
  for (const field of ['generators', 'transformers', 'validators']) {
    const entries = k[field];
    if (!Array.isArray(entries)) continue;
    for (const e of entries) {
      if (typeof e !== 'string') {
        docs.push(e);
        continue;
      }
      if (e.includes('\n')) {
        parseAll(e); // an inline config
        continue;
      }
      const path = posix.normalize(posix.join(kDir, e));
      const file = tree.get(path);
      if (file !== undefined) parseAll(file);
      // A directory: a kustomization whose resources are the configs (its own file aside).
      else
        for (const [p, text] of tree)
          if (p.startsWith(`${path}/`) && !KUSTOMIZATION_NAMES.includes(posix.basename(p))) parseAll(text);
    }
  }
  return docs;
}

const FUNCTION_ANNOTATION = /config\.(?:kubernetes\.io|k8s\.io)\/function/;

/**
 * What a case needs beyond a local tree and the builtins, from its options, the path and the
 * input files: `remote` (a URL among resources/components or as the path), `helm` (helmCharts
 * or a HelmChartInflationGenerator; plugin-enabled options always enable Helm too), `plugins` (a generator/transformer/validator
 * config that is not `apiVersion: builtin`, a KRM function annotation, or exec functions enabled).
 */
export function caseNeeds(options: CaseOptions, path: string, files: string[], texts: string[]): Need[] {
  const needs: Need[] = [];
  const tree = new Map(files.map((f, i) => [f, texts[i]!]));
  const kustomizations = [...tree].filter(([f]) => KUSTOMIZATION_NAMES.includes(posix.basename(f)));
  if (REMOTE.test(path) || kustomizations.some(([, t]) => REMOTE.test(t))) needs.push('remote');
  if (
    texts.some((t) =>
      /^\s*(?:helmCharts|helmGlobals|helmChartInflationGenerator)\s*:|kind:\s*HelmChartInflationGenerator\b/m.test(
        t,
      ),
    )
  )
    needs.push('helm');
  let plugins = options.plugins.fnExec || texts.some((t) => FUNCTION_ANNOTATION.test(t));
  for (const [f, text] of kustomizations) {
    if (plugins) break;
    let k: unknown;
    try {
      k = parse(text);
    } catch {
      continue; // kustomize refuses it; no plugin is run
    }
    if (typeof k !== 'object' || k === null) continue;
    for (const doc of pluginConfigs(
      posix.dirname(f) === '.' ? '' : posix.dirname(f),
      k as Record<string, unknown>,
      tree,
    )) {
      const apiVersion = (doc as { apiVersion?: unknown } | null)?.apiVersion;
      if (doc !== null && typeof doc === 'object' && apiVersion !== 'builtin') plugins = true;
    }
  }
  if (plugins) needs.push('plugins');
  return needs;
}

export function readIndex(): KrustyIndex {
  return JSON.parse(readFileSync(join(CASES_DIR, 'index.json'), 'utf8')) as KrustyIndex;
}

export function readCase(id: string): CaseRecord {
  return JSON.parse(readFileSync(join(CASES_DIR, id, 'case.json'), 'utf8')) as CaseRecord;
}

/**
 * `fifo`: the case's own options. Mooring has no build option for the order (nor for the
 * managed-by label), so the harness's `Reorder: none` becomes `sortOptions: {order: fifo}` and
 * `AddManagedbyLabel` becomes `buildMetadata: [managedByLabel]` in the entry's kustomization,
 * unless it sets those fields itself (kustomize lets the file win over the option too).
 * `cli`: the same without the order, i.e. what `kustomize build` does by default (legacy order).
 */
export type Variant = 'fifo' | 'cli';

export type Outcome =
  | { kind: 'pass' }
  | { kind: 'wrong-output'; first: string }
  | { kind: 'refused'; first: string }
  | { kind: 'crashed'; first: string }
  | { kind: 'accepted-but-kustomize-errors'; first: string };

export type GapCategory = Exclude<Outcome['kind'], 'pass'>;

/** The expectation a variant is compared with: the text and whether it is an error. */
export function expectation(id: string, variant: Variant): { error: boolean; text: string } {
  const dir = join(CASES_DIR, id);
  if (variant === 'cli') {
    if (existsSync(join(dir, 'expected-cli.yaml')))
      return { error: false, text: readFileSync(join(dir, 'expected-cli.yaml'), 'utf8') };
    if (existsSync(join(dir, 'expected-cli-error.txt')))
      return { error: true, text: readFileSync(join(dir, 'expected-cli-error.txt'), 'utf8') };
  }
  if (existsSync(join(dir, 'expected-error.txt')))
    return { error: true, text: readFileSync(join(dir, 'expected-error.txt'), 'utf8') };
  return { error: false, text: readFileSync(join(dir, 'expected.yaml'), 'utf8') };
}

/** A view of the case's input/ in which the entry's kustomization carries the options Mooring has no flag for. */
function withOptions(fs: ConfinedFs, rec: CaseRecord, variant: Variant): ConfinedFs {
  const entry = posix.normalize(rec.entry) === '.' ? '' : posix.normalize(rec.entry);
  const name = KUSTOMIZATION_NAMES.map((n) => (entry ? `${entry}/${n}` : n)).find((p) => {
    try {
      return fs.exists(p) && !fs.isDir(p);
    } catch {
      return false;
    }
  });
  if (name === undefined) return fs;
  let extra = '';
  const text = fs.readFile(name).toString('utf8');
  if (variant === 'fifo' && rec.options.reorder === 'none' && !/^sortOptions\s*:/m.test(text))
    extra += 'sortOptions:\n  order: fifo\n';
  if (rec.options.addManagedbyLabel && !/^buildMetadata\s*:/m.test(text))
    extra += 'buildMetadata: [managedByLabel]\n';
  if (extra === '') return fs;
  const patched = Buffer.from(`${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${extra}`);
  return {
    root: fs.root,
    readFile: (rel) => (posix.normalize(rel) === name ? patched : fs.readFile(rel)),
    readDir: (rel) => fs.readDir(rel),
    isDir: (rel) => fs.isDir(rel),
    exists: (rel) => fs.exists(rel),
    realPath: (rel) => fs.realPath(rel),
  };
}

/** The first line where two texts differ, as `line N: want <..> got <..>`. */
export function firstDifference(want: string, got: string): string {
  const a = want.split('\n');
  const b = got.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      const show = (s: string | undefined): string => (s === undefined ? '(end)' : JSON.stringify(s));
      return `line ${i + 1}: want ${show(a[i])} got ${show(b[i])}`.slice(0, 200);
    }
  }
  return 'same lines';
}

const oneLine = (s: string): string =>
  (s.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 200);

/** The engine functions a run uses: @mooring/kustomize, or another copy of it (hack/krusty-report.ts --engine). */
export type Engine = Pick<typeof mooring, 'build' | 'createConfinedFs' | 'KustomizeError' | 'toYAML'>;

/** Builds a case with Mooring and compares the result with kustomize's. */
export async function runCase(
  rec: CaseRecord,
  variant: Variant,
  engine: Engine = mooring,
): Promise<{ outcome: Outcome; actual?: string }> {
  const want = expectation(rec.id, variant);
  let actual: string;
  try {
    const input = join(CASES_DIR, rec.id, 'input');
    for (const d of rec.emptyDirs ?? []) mkdirSync(join(input, d), { recursive: true });
    const fs = withOptions(engine.createConfinedFs(input), rec, variant);
    const loadRestrictions = rec.options.loadRestrictions === 'LoadRestrictionsNone' ? 'none' : 'rootOnly';
    // kustomize's --enable-helm: the charts render through the operator's sandboxed Helm renderer.
    const helm = rec.options.plugins.helmEnabled ? helmRenderer({ limits: HELM_LIMITS }) : undefined;
    actual = engine.toYAML(
      await engine.build(fs, rec.entry, { loadRestrictions, ...(helm ? { helm } : {}) }),
    );
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (!(err instanceof engine.KustomizeError))
      return { outcome: { kind: 'crashed', first: oneLine(message) } };
    if (want.error) return { outcome: { kind: 'pass' } };
    return { outcome: { kind: 'refused', first: oneLine(message) } };
  }
  if (want.error)
    return { outcome: { kind: 'accepted-but-kustomize-errors', first: oneLine(want.text) }, actual };
  if (actual === want.text) return { outcome: { kind: 'pass' }, actual };
  return { outcome: { kind: 'wrong-output', first: firstDifference(want.text, actual) }, actual };
}

/** known-gaps.json: `<id>` (fifo) or `<id>#cli` → category and the first line of the difference. */
export type KnownGaps = Record<string, { category: GapCategory; first: string }>;

export function readKnownGaps(): KnownGaps {
  if (!existsSync(KNOWN_GAPS_JSON)) return {};
  return JSON.parse(readFileSync(KNOWN_GAPS_JSON, 'utf8')) as KnownGaps;
}

/** The ids of the scored cases (not excluded), in index order. */
export function scoredCases(): CaseRecord[] {
  return readIndex()
    .cases.filter((c) => c.excluded === undefined)
    .map((c) => readCase(c.id));
}

/** Whether the CLI-default comparison of a case is a separate check (its order option is not the CLI's). */
export const hasCliVariant = (rec: CaseRecord): boolean => rec.options.reorder === 'none';
