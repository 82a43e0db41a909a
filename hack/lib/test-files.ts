// Finds the test files and sorts them into three kinds by reading their imports (transitively,
// within the repository) rather than a mark in each file:
//   cluster      it, or a helper it imports, uses one of CLUSTER_ENTRY_POINTS (a control plane)
//   integration  no cluster, but it uses one of INTEGRATION_ENTRY_POINTS: a real server or a
//                heavyweight tool in a process of its own (sshd, git http-backend, docker-registry,
//                helm, an image build, the mooring command end to end)
//   unit         neither: the code under test runs in the test's own process
// Importing a module that merely contains such a function is not enough: `repoRoot` from
// hack/lib/control-plane.ts or `eventually` from the harness barrel start nothing. Names are
// followed through `export ... from` (so a barrel such as test/harness/index.ts resolves each name
// to the module that defines it); any other module counts as a whole, whichever of its exports
// is used. Type-only imports are erased at run time and ignored.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type TS from 'typescript';

// TypeScript's parser takes a while to load; a run whose modules are all in the cache never does.
let tsModule: typeof TS | undefined;
function typescript(): typeof TS {
  tsModule ??= createRequire(import.meta.url)('typescript') as typeof TS;
  return tsModule;
}

/**
 * The functions that start or reach a control plane, by the module (path from the repository
 * root) that defines them. A test that calls one needs a cluster; so does one that imports a
 * helper module which calls one (the operators' fixtures, `waitForReady`, ...). `down` is here
 * because a test that stops a plane has one: hack/demo.test.ts starts its plane through
 * `bash hack/demo`, which no import shows.
 */
export const CLUSTER_ENTRY_POINTS: EntryPoints = {
  'test/harness/cluster.ts': ['testCluster', 'testNamespace', 'kubectl', 'privateControlPlane'],
  'hack/lib/control-plane.ts': ['up', 'down', 'restartApiServer'],
};

/**
 * The functions that start a real server or a heavyweight tool in a process of its own, by the
 * module that defines them. A test that uses one, without a cluster, is an integration test:
 * `npm test` runs it, `npm run test:unit` leaves it out. Small tools a test runs for a moment
 * (git on a local repository, tar, openssl, ssh-keygen) are not listed: unit tests use them.
 */
export const INTEGRATION_ENTRY_POINTS: EntryPoints = {
  // One `git http-backend` process per request, behind an HTTP server.
  'test/harness/git-server.ts': ['GitServer'],
  // A private sshd.
  'test/harness/ssh-git-server.ts': ['SshGitServer'],
  // Debian's docker-registry.
  'test/harness/registry.ts': ['TestRegistry'],
  // A container run with runc.
  'test/harness/oci-runtime.ts': ['runContainer'],
  // Builds the operator image from Debian packages and Node: minutes of work.
  'hack/lib/image/build.ts': ['buildImage'],
  // bin/helm, the reference; a file that requires the binaries renders with bin/mooring-helm.wasm
  // (goTestHelmOverlays compiles and runs Go tests)
  // and compares with bin/helm (each process compiles the 80 MB renderer module).
  'shared/helm/test/helm-oracle.ts': ['helmTemplate', 'requireHelmBinaries', 'goTestHelmOverlays'],
  // The mooring command end to end: the bundled CLI in a process of its own per call.
  'cli/test/run-cli.ts': ['mooring', 'CLI_MAIN'],
};

/**
 * Unit files that `run-tests --unit` runs each in a Node process of its own, as `npm test` runs
 * every file, instead of several to a process (hack/lib/unit-batches.ts), by path from the
 * repository root, with the reason: what each leaves changed in its process, or needs fresh, that
 * the files batched with it would meet.
 */
export const RUN_ALONE: Readonly<Record<string, string>> = {
  'operators/all-in-one/src/artifact-server-crash.test.ts':
    'asserts that no global fetch dispatcher is set before the operators load; undici’s own fetch sets one on first use, and a file batched before it had used it',
};

/** Entry points: module path (from the repository root) → the names in it that count. */
export type EntryPoints = Readonly<Record<string, readonly string[]>>;

/** The directories `findTestFiles` looks in, and the ones it never enters. */
const TEST_ROOTS = ['shared', 'operators', 'cli', 'test', 'hack'];
const SKIP_DIRS = new Set(['node_modules', '.git', 'bin', '.mooring', 'testdata']);

/** Every `*.test.ts` under the repository's code directories, sorted. */
export function findTestFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name));
      } else if (entry.name.endsWith('.test.ts')) out.push(join(dir, entry.name));
    }
  };
  for (const d of TEST_ROOTS) if (existsSync(join(root, d))) walk(join(root, d));
  return out.sort();
}

/** What a test file needs beyond its own process, from least to most (see the top of this file). */
export type TestKind = 'unit' | 'integration' | 'cluster';

const RANK: Record<TestKind, number> = { unit: 0, integration: 1, cluster: 2 };

/** A file's kind, and the chain of imports that makes it so. */
export interface Verdict {
  kind: TestKind;
  /**
   * From the file's first import on the way, to the entry point, e.g.
   * `['operators/kustomize/test/fixture.ts', 'testCluster in test/harness/cluster.ts']`; empty
   * for a unit test. A file that reaches both kinds of entry point shows the way to the cluster.
   */
  via: string[];
}

const UNIT: Verdict = { kind: 'unit', via: [] };

/** The verdict that needs more; the first on a tie, so `via` is the first way found. */
function heavier(a: Verdict, b: Verdict): Verdict {
  return RANK[b.kind] > RANK[a.kind] ? b : a;
}

/** What one module imports and exports, as far as the run-time graph goes (plain JSON, for the cache). */
export interface ModuleInfo {
  /** Value imports: the names taken from each specifier, or '*' for the whole module. */
  imports: { spec: string; names: string[] | '*' }[];
  /** `export { a as b } from 'x'` as b → { spec: 'x', name: 'a' }; `export * as b from 'x'` has name '*'. */
  reexports: Record<string, { spec: string; name: string }>;
  /** `export * from 'x'`. */
  stars: string[];
  /** Names this module exports from its own declarations. */
  locals: string[];
}

/** Reads a module's imports and exports with TypeScript's parser (no type-checking). */
export function parseModule(file: string, text = readFileSync(file, 'utf8')): ModuleInfo {
  const ts = typescript();
  const hasModifier = (node: TS.Node, kind: TS.SyntaxKind): boolean =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
  const stringLiteral = (node: TS.Node | undefined): string | undefined =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ESNext, false, ts.ScriptKind.TS);
  const imports: ModuleInfo['imports'] = [];
  const reexports = new Map<string, { spec: string; name: string }>();
  const stars: string[] = [];
  const locals = new Set<string>();
  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const spec = stringLiteral(stmt.moduleSpecifier);
      const clause = stmt.importClause;
      if (!spec || clause?.isTypeOnly) continue;
      if (!clause) {
        imports.push({ spec, names: '*' }); // for its side effects
        continue;
      }
      const names: string[] = [];
      if (clause.name) names.push('default');
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) {
        imports.push({ spec, names: '*' });
        continue;
      }
      for (const el of bindings?.elements ?? []) {
        if (!el.isTypeOnly) names.push((el.propertyName ?? el.name).text);
      }
      if (names.length) imports.push({ spec, names });
    } else if (ts.isExportDeclaration(stmt)) {
      if (stmt.isTypeOnly) continue;
      const spec = stringLiteral(stmt.moduleSpecifier);
      const clause = stmt.exportClause;
      if (spec === undefined) {
        // `export { a as b }` of a local (or imported) binding: the module itself answers for it.
        if (clause && ts.isNamedExports(clause)) for (const el of clause.elements) locals.add(el.name.text);
      } else if (!clause) {
        stars.push(spec);
      } else if (ts.isNamespaceExport(clause)) {
        reexports.set(clause.name.text, { spec, name: '*' });
      } else {
        for (const el of clause.elements) {
          if (!el.isTypeOnly) reexports.set(el.name.text, { spec, name: (el.propertyName ?? el.name).text });
        }
      }
    } else if (ts.isExportAssignment(stmt)) {
      locals.add('default');
    } else if (hasModifier(stmt, ts.SyntaxKind.ExportKeyword)) {
      if (hasModifier(stmt, ts.SyntaxKind.DefaultKeyword)) locals.add('default');
      else if (ts.isVariableStatement(stmt)) {
        for (const decl of stmt.declarationList.declarations) {
          if (ts.isIdentifier(decl.name)) locals.add(decl.name.text);
        }
      } else if (
        (ts.isFunctionDeclaration(stmt) || ts.isClassDeclaration(stmt) || ts.isEnumDeclaration(stmt)) &&
        stmt.name
      ) {
        locals.add(stmt.name.text);
      }
    }
  }
  // `await import('./x.ts')` with a literal specifier loads the whole module.
  if (text.includes('import(')) {
    const visit = (node: TS.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const spec = stringLiteral(node.arguments[0]);
        if (spec) imports.push({ spec, names: '*' });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { imports, reexports: Object.fromEntries(reexports), stars, locals: [...locals] };
}

/** A parsed module, with lookups. */
interface Module {
  imports: ModuleInfo['imports'];
  reexports: Map<string, { spec: string; name: string }>;
  stars: string[];
  locals: Set<string>;
}

/** Parsed modules by path, kept between runs; an entry counts while the file's mtime and size match. */
interface Cache {
  /** The mtime and size of this classifier's own source: a new parser invalidates everything. */
  parser: string;
  modules: Record<string, { mtimeMs: number; size: number; info: ModuleInfo }>;
}

function parserStamp(): string {
  const st = statSync(fileURLToPath(import.meta.url));
  return `${st.mtimeMs}:${st.size}`;
}

interface Workspace {
  dir: string;
  exports: Record<string, string>;
}

function exportTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const conditions = value as Record<string, unknown>;
    return exportTarget(conditions.import ?? conditions.default ?? conditions.node);
  }
  return undefined;
}

/** The npm workspaces of the root package.json, by package name. */
function readWorkspaces(root: string): Map<string, Workspace> {
  const out = new Map<string, Workspace>();
  let globs: string[] = [];
  try {
    globs = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces ?? [];
  } catch {
    return out;
  }
  const dirs = globs.flatMap((g) => {
    if (!g.endsWith('/*')) return [join(root, g)];
    const parent = join(root, g.slice(0, -2));
    return existsSync(parent) ? readdirSync(parent).map((d) => join(parent, d)) : [];
  });
  for (const dir of dirs) {
    let pkg: { name?: string; exports?: unknown; main?: string };
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (!pkg.name) continue;
    const exports: Record<string, string> = {};
    const raw = pkg.exports ?? pkg.main ?? './index.ts';
    const map =
      typeof raw === 'string' || !Object.keys(raw as object).some((k) => k.startsWith('.'))
        ? { '.': raw }
        : (raw as Record<string, unknown>);
    for (const [key, value] of Object.entries(map)) {
      const target = exportTarget(value);
      if (target) exports[key] = target;
    }
    out.set(pkg.name, { dir, exports });
  }
  return out;
}

/**
 * Classifies test files by their import graph. One instance parses each module once, so
 * classifying the whole suite reads every reachable module a single time.
 */
export class TestClassifier {
  readonly root: string;
  /** Entry-point module → its names, each with the kind it makes a test. */
  private readonly entryPoints: Map<string, Map<string, TestKind>>;
  private readonly workspaces: Map<string, Workspace>;
  private readonly modules = new Map<string, Module>();
  private readonly cacheFile: string | undefined;
  private cache: Cache;
  private cacheDirty = false;
  private readonly memo = new Map<string, Verdict>();
  private readonly inProgress = new Set<string>();
  private cycleMet = false;

  /**
   * `cacheFile` keeps the parsed imports between runs (call `saveCache`), so a run re-parses only
   * the files that changed and, when none did, never loads TypeScript.
   */
  constructor(
    root: string,
    options: {
      entryPoints?: { cluster?: EntryPoints; integration?: EntryPoints };
      cacheFile?: string;
    } = {},
  ) {
    const entryPoints = options.entryPoints ?? {
      cluster: CLUSTER_ENTRY_POINTS,
      integration: INTEGRATION_ENTRY_POINTS,
    };
    this.root = resolve(root);
    this.cacheFile = options.cacheFile;
    const parser = parserStamp();
    this.cache = { parser, modules: {} };
    if (this.cacheFile) {
      try {
        const saved = JSON.parse(readFileSync(this.cacheFile, 'utf8')) as Cache;
        if (saved.parser === parser && saved.modules) this.cache = saved;
      } catch {}
    }
    this.entryPoints = new Map();
    // Integration first, so a name listed under both counts as a cluster.
    for (const kind of ['integration', 'cluster'] as const) {
      for (const [path, names] of Object.entries(entryPoints[kind] ?? {})) {
        const file = join(this.root, path);
        const known = this.entryPoints.get(file) ?? new Map<string, TestKind>();
        for (const name of names) known.set(name, kind);
        this.entryPoints.set(file, known);
      }
    }
    this.workspaces = readWorkspaces(this.root);
  }

  /** What `file` (absolute, or relative to the root) needs, and why. */
  classify(file: string): Verdict {
    return this.moduleVerdict(resolve(this.root, file));
  }

  private rel(file: string): string {
    const r = relative(this.root, file);
    return r.startsWith('..') ? file : r.split(sep).join('/');
  }

  /** Writes what was parsed to the cache file, if anything new was. */
  saveCache(): void {
    if (!this.cacheFile || !this.cacheDirty) return;
    mkdirSync(dirname(this.cacheFile), { recursive: true });
    const tmp = `${this.cacheFile}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify(this.cache));
    renameSync(tmp, this.cacheFile); // two runs at once: the last rename wins, both files are whole
    this.cacheDirty = false;
  }

  private info(file: string): Module {
    let module = this.modules.get(file);
    if (module) return module;
    let info: ModuleInfo = { imports: [], reexports: {}, stars: [], locals: [] };
    try {
      const st = statSync(file);
      const key = this.rel(file);
      const cached = this.cache.modules[key];
      if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) info = cached.info;
      else {
        info = parseModule(file);
        // Files outside the repository (a test's temporary ones) are not worth keeping.
        if (key !== file) {
          this.cache.modules[key] = { mtimeMs: st.mtimeMs, size: st.size, info };
          this.cacheDirty = true;
        }
      }
    } catch {}
    module = {
      imports: info.imports,
      reexports: new Map(Object.entries(info.reexports)),
      stars: info.stars,
      locals: new Set(info.locals),
    };
    this.modules.set(file, module);
    return module;
  }

  /** The repository file a specifier names, or undefined for Node built-ins and npm packages. */
  resolveSpecifier(from: string, spec: string): string | undefined {
    let base: string | undefined;
    if (spec.startsWith('.') || spec.startsWith('/')) base = resolve(dirname(from), spec);
    else if (spec.startsWith('file:')) base = new URL(spec).pathname;
    else {
      const parts = spec.split('/');
      const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      const ws = name === undefined ? undefined : this.workspaces.get(name);
      if (!ws || name === undefined) return undefined;
      const sub = spec.slice(name.length);
      const target = ws.exports[`.${sub}`];
      base = target === undefined ? join(ws.dir, sub) : join(ws.dir, target);
    }
    for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
      if (candidate.split(sep).includes('node_modules')) return undefined;
      try {
        if (statSync(candidate).isFile()) return candidate;
      } catch {}
    }
    return undefined;
  }

  /**
   * Memoised. A module met again while it is still being worked out (an import cycle) counts as
   * needing nothing on that edge; a verdict short of a cluster found that way is not kept, since
   * the rest of the cycle may still lead to more.
   */
  private remember(key: string, compute: () => Verdict): Verdict {
    const known = this.memo.get(key);
    if (known) return known;
    if (this.inProgress.has(key)) {
      this.cycleMet = true;
      return UNIT;
    }
    const outer = this.cycleMet;
    this.cycleMet = false;
    this.inProgress.add(key);
    const verdict = compute();
    this.inProgress.delete(key);
    if (verdict.kind === 'cluster' || !this.cycleMet) this.memo.set(key, verdict);
    this.cycleMet ||= outer;
    return verdict;
  }

  /** What running `file`'s own code can reach: the most any of its value imports needs. */
  private moduleVerdict(file: string): Verdict {
    return this.remember(`module ${file}`, () => {
      let most = UNIT;
      for (const { spec, names } of this.info(file).imports) {
        const target = this.resolveSpecifier(file, spec);
        if (!target) continue;
        for (const name of names === '*' ? ['*'] : names) {
          most = heavier(most, name === '*' ? this.wholeVerdict(target) : this.nameVerdict(target, name));
          if (most.kind === 'cluster') return most;
        }
      }
      return most;
    });
  }

  private hop(file: string, v: Verdict): Verdict {
    return v.kind !== 'unit' && !this.entryPoints.has(file)
      ? { kind: v.kind, via: [this.rel(file), ...v.via] }
      : v;
  }

  /** Using export `name` of `file`. */
  private nameVerdict(file: string, name: string): Verdict {
    return this.remember(`name ${name} ${file}`, () => {
      const entry = this.entryPoints.get(file);
      if (entry) {
        const kind = entry.get(name);
        return kind ? { kind, via: [`${name} in ${this.rel(file)}`] } : UNIT;
      }
      const info = this.info(file);
      const re = info.reexports.get(name);
      if (re) {
        const target = this.resolveSpecifier(file, re.spec);
        if (!target) return UNIT;
        return re.name === '*' ? this.wholeVerdict(target) : this.nameVerdict(target, re.name);
      }
      if (!info.locals.has(name)) {
        for (const spec of info.stars) {
          const target = this.resolveSpecifier(file, spec);
          if (target && this.exportsName(target, name, new Set())) return this.nameVerdict(target, name);
        }
      }
      return this.hop(file, this.moduleVerdict(file));
    });
  }

  private exportsName(file: string, name: string, seen: Set<string>): boolean {
    if (seen.has(file)) return false;
    seen.add(file);
    const info = this.info(file);
    if (info.locals.has(name) || info.reexports.has(name)) return true;
    return info.stars.some((spec) => {
      const target = this.resolveSpecifier(file, spec);
      return target !== undefined && this.exportsName(target, name, seen);
    });
  }

  /** Using a module as a whole (`import * as`, a side-effect import, `import()`). */
  private wholeVerdict(file: string): Verdict {
    return this.remember(`whole ${file}`, () => {
      const entry = this.entryPoints.get(file);
      if (entry) {
        const kind = [...entry.values()].reduce((a, b) => (RANK[b] > RANK[a] ? b : a));
        const names = [...entry].filter(([, k]) => k === kind).map(([n]) => n);
        return { kind, via: [`${names.join(', ')} in ${this.rel(file)}`] };
      }
      let most = this.hop(file, this.moduleVerdict(file));
      const info = this.info(file);
      for (const spec of [...info.stars, ...[...info.reexports.values()].map((r) => r.spec)]) {
        if (most.kind === 'cluster') break;
        const target = this.resolveSpecifier(file, spec);
        if (target) most = heavier(most, this.hop(file, this.wholeVerdict(target)));
      }
      return most;
    });
  }
}
