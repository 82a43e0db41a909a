// Fuzzes the render engine (shared/kustomize): the kustomization file parser, the YAML resource
// loader and whole builds through createConfinedFs, on mutated real-looking trees (corpus/kustomize,
// copied from test/conformance/kustomize) and on generated kustomizations. Every input ends in a
// KustomizeError with a readable message or in resources that print as YAML: never a TypeError,
// RangeError or other crash, never a hang, and YAML bombs are refused.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { after, describe, test } from 'node:test';
import { build, createConfinedFs, KustomizeError, toYAML } from '@mooring/kustomize';
import { parseKustomization } from '@mooring/kustomize/kustomization-file';
import { parseResources } from '@mooring/kustomize/load-resources';
import { stringify } from 'yaml';
import {
  assertClearError,
  CORPUS_DIR,
  check,
  collectProcessWarnings,
  edits,
  fc,
  knownBugs,
  mutate,
} from './fuzz.ts';

const warnings = collectProcessWarnings();

/** A tree of files, path (POSIX, relative) → content, and the directory to build. */
interface Tree {
  name: string;
  entry: string;
  files: Record<string, string>;
}

function readTree(dir: string, name: string): Tree {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files[relative(dir, p).split('\\').join('/')] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  const entry = (files['entry.txt'] ?? '.').trim() || '.';
  delete files['entry.txt'];
  return { name, entry, files };
}

const KUSTOMIZE_CORPUS = join(CORPUS_DIR, 'kustomize');
const trees: Tree[] = readdirSync(KUSTOMIZE_CORPUS)
  .filter((n) => statSync(join(KUSTOMIZE_CORPUS, n)).isDirectory())
  .sort()
  .map((n) => readTree(join(KUSTOMIZE_CORPUS, n), n));
const yamlTexts = trees.flatMap((t) => Object.values(t.files));

const work = mkdtempSync(join(tmpdir(), 'mooring-fuzz-kustomize-'));
after(() => rmSync(work, { recursive: true, force: true }));
let caseNo = 0;

/** How builds ended, per property: successes and the kinds of refusal (for the diagnostics). */
const outcomes = new Map<string, number>();
const tally = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
function report(t: { diagnostic(message: string): void }): void {
  const top = [...outcomes].sort((a, b) => b[1] - a[1]).slice(0, 6);
  t.diagnostic(top.map(([k, n]) => `${n} ${k}`).join('; '));
  outcomes.clear();
}

/**
 * The known bugs of corpus/kustomize/known-bugs.json, tolerated by the random runs (so long runs
 * report new bugs only) and not by the corpus tests, which are marked todo until they are fixed.
 */
const PROTOTYPE_KEY =
  /(^|[\s{,])(__proto__|constructor|hasOwnProperty|isPrototypeOf|propertyIsEnumerable|toString|toLocaleString|valueOf|__defineGetter__|__defineSetter__|__lookupGetter__|__lookupSetter__)\s*:/m;
function knownBug(err: unknown, inputs: string[]): boolean {
  const message = (err as Error)?.message ?? '';
  if (err instanceof KustomizeError && /unknown op '\[object Object\]'/.test(message)) return true;
  if (!inputs.some((text) => PROTOTYPE_KEY.test(text))) return false;
  if (err instanceof KustomizeError) return /\[native code\]/.test(message);
  return (
    err instanceof TypeError &&
    /check is not a function|Cannot convert undefined or null to object/.test(message)
  );
}

let strict = false;

function isClear(err: unknown, inputs: string[] = []): void {
  if (!strict && knownBug(err, inputs)) return;
  assertClearError(err, [KustomizeError]);
  assert.doesNotMatch((err as Error).message, /\[native code\]|\[object Object\]/, 'a readable message');
}

/** Writes the tree, builds it and prints the result; a KustomizeError is the only allowed failure. */
async function buildTree(tree: Tree, options: Parameters<typeof build>[2] = {}): Promise<void> {
  const dir = join(work, String(caseNo++));
  try {
    for (const [path, content] of Object.entries(tree.files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    mkdirSync(dir, { recursive: true });
    try {
      const resources = await build(createConfinedFs(dir), tree.entry, options);
      const text = toYAML(resources);
      assert.equal(typeof text, 'string');
      tally(resources.length > 0 ? 'built' : 'built empty');
    } catch (err) {
      isClear(err, Object.values(tree.files));
      if (process.env.MOORING_FUZZ_VERBOSE) console.error((err as Error).message);
      tally(
        `refused: ${(err as Error).message.replace(/"[^"]*"|'[^']*'|\S*\.yaml|[0-9]+/g, '…').slice(0, 50)}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parseBoth(text: string): void {
  for (const run of [
    () => parseKustomization(text, 'kustomization.yaml'),
    () => parseResources(text, 'res.yaml'),
  ]) {
    try {
      run();
    } catch (err) {
      isClear(err, [text]);
    }
  }
}

// ---- generated kustomizations --------------------------------------------------------------------

const word = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('app', 'web', 'db', 'config', 'versions', 'nginx', 'Deployment', 'ConfigMap'),
  },
  fc.constantFrom(
    '',
    '*',
    '.*',
    '[',
    'a=b',
    '__proto__',
    'constructor',
    'toString',
    '../x',
    'UPPER',
    'x'.repeat(300),
  ),
  fc.string({ maxLength: 10 }),
);
const fieldPath = fc.oneof(
  fc.constantFrom(
    'metadata.name',
    'metadata.namespace',
    'metadata.labels.app',
    'metadata.annotations',
    'data.tag',
    'data',
    'spec.replicas',
    'spec.template.spec.containers.0.image',
    'spec.template.spec.containers.[name=app].image',
    'spec.template.spec.containers.*.image',
    'spec.containers.[name=].image',
    'spec.template.spec.containers.99.image',
    'spec.[a=b].[c=d]',
    'spec..x',
    '.',
    '[',
    '[=]',
    '',
    '*',
    'metadata.name.x.y.z',
    'spec.template.metadata.labels',
  ),
  fc.array(word, { minLength: 1, maxLength: 4 }).map((p) => p.join('.')),
);
const selector = fc.record(
  {
    group: fc.constantFrom('', 'apps', 'batch'),
    version: fc.constantFrom('v1', 'v1beta1'),
    kind: word,
    name: word,
    namespace: word,
    labelSelector: fc.constantFrom(
      'app=web',
      'app in (a,b)',
      '!app',
      'a!=b',
      '=',
      ',',
      'app notin ()',
      'x==y',
    ),
    annotationSelector: fc.constantFrom('a=b', '', 'a'),
  },
  { requiredKeys: [] },
);
const jsonValue = fc.jsonValue({ maxDepth: 3 });
const opPatch = fc
  .array(
    fc.record(
      {
        op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'),
        path: fc.oneof(
          fc.constantFrom(
            '/spec/replicas',
            '/metadata/name',
            '/data/x',
            '/spec/template/spec/containers/0',
            '/a/-',
            '/',
            '',
            '/~2',
            '/0/1',
          ),
          fieldPath.map((p) => `/${p.replaceAll('.', '/')}`),
        ),
        from: fc.constantFrom('/metadata/name', '/data', '/nope'),
        value: jsonValue,
      },
      { requiredKeys: ['op'] },
    ),
    { maxLength: 3 },
  )
  .map((ops) => JSON.stringify(ops));
const smpPatch = fc
  .record(
    {
      apiVersion: fc.constantFrom('v1', 'apps/v1'),
      kind: word,
      metadata: fc.record(
        { name: word, labels: fc.dictionary(word, word, { maxKeys: 2 }) },
        { requiredKeys: [] },
      ),
      spec: fc.dictionary(
        fc.constantFrom('replicas', 'template', 'containers', '$patch', '$retainKeys', 'selector', 'ports'),
        jsonValue,
        { maxKeys: 3 },
      ),
      data: fc.dictionary(word, fc.oneof(word, jsonValue), { maxKeys: 3 }),
      $patch: fc.constantFrom('delete', 'replace', 'merge', 'bogus'),
    },
    { requiredKeys: ['kind'] },
  )
  .map((p) => stringify(p));

const generator = fc.record(
  {
    name: word,
    namespace: word,
    behavior: fc.constantFrom('create', 'merge', 'replace', 'bogus', ''),
    literals: fc.array(
      fc.oneof(fc.constantFrom('a=b', 'k=', '=v', 'noequals', 'x=y=z', 'key with space=1'), word),
      {
        maxLength: 3,
      },
    ),
    files: fc.array(fc.constantFrom('config.properties', 'missing.txt', '../outside', 'k=cm.yaml', 'base'), {
      maxLength: 2,
    }),
    options: fc.record(
      {
        disableNameSuffixHash: fc.boolean(),
        immutable: fc.boolean(),
        labels: fc.dictionary(word, word, { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

/** A kustomization with the right field types (mostly) and hostile values, over a corpus tree. */
const generatedKustomization = (tree: Tree) => {
  // Paths as the entry directory's kustomization names them.
  const entryDir = tree.entry === '.' ? '' : tree.entry;
  const rel = (p: string) => posix.relative(entryDir, p) || '.';
  const real = Object.keys(tree.files)
    .filter((f) => !f.endsWith('kustomization.yaml'))
    .map(rel);
  const files = [...real, 'missing.yaml'];
  const dirs = [
    ...new Set(
      Object.keys(tree.files)
        .filter((f) => f.endsWith('kustomization.yaml') && posix.dirname(f) !== (entryDir || '.'))
        .map((f) => rel(posix.dirname(f))),
    ),
  ];
  if (dirs.length === 0) dirs.push(...files);
  return fc.record(
    {
      resources: fc.uniqueArray(
        fc.oneof(
          { weight: 20, arbitrary: fc.constantFrom(...(real.length > 0 ? real : files)) },
          { weight: 3, arbitrary: fc.constantFrom(...dirs) },
          { weight: 1, arbitrary: word },
        ),
        { maxLength: 4 },
      ),
      components: fc.array(fc.constantFrom(...dirs, 'components/monitoring'), { maxLength: 1 }),
      namespace: word,
      namePrefix: word,
      nameSuffix: word,
      commonLabels: fc.dictionary(word, word, { maxKeys: 2 }),
      commonAnnotations: fc.dictionary(word, word, { maxKeys: 2 }),
      labels: fc.array(
        fc.record(
          {
            pairs: fc.dictionary(word, word, { maxKeys: 2 }),
            includeSelectors: fc.boolean(),
            includeTemplates: fc.boolean(),
            fields: fc.array(
              fc.record({ path: fieldPath, kind: word, create: fc.boolean() }, { requiredKeys: ['path'] }),
              {
                maxLength: 2,
              },
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 2 },
      ),
      images: fc.array(
        fc.record(
          {
            name: word,
            newName: word,
            newTag: fc.oneof(word, fc.constantFrom('1.0', '@sha256:abc', ':x')),
            digest: fc.constantFrom(`sha256:${'a'.repeat(64)}`, 'nope', ''),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 2 },
      ),
      replicas: fc.array(fc.record({ name: word, count: fc.integer({ min: -5, max: 2 ** 40 }) }), {
        maxLength: 2,
      }),
      patches: fc.array(
        fc.record(
          {
            patch: fc.oneof(smpPatch, opPatch),
            target: selector,
            path: fc.constantFrom(...files, 'missing.yaml'),
            options: fc.record(
              { allowNameChange: fc.boolean(), allowKindChange: fc.boolean() },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      patchesStrategicMerge: fc.array(fc.oneof(fc.constantFrom(...files), smpPatch), { maxLength: 1 }),
      patchesJson6902: fc.array(fc.record({ target: selector, patch: opPatch }, { requiredKeys: [] }), {
        maxLength: 1,
      }),
      replacements: fc.array(
        fc.oneof(
          fc.record(
            {
              source: fc.record(
                {
                  kind: word,
                  name: word,
                  namespace: word,
                  fieldPath,
                  options: fc.record(
                    {
                      delimiter: fc.constantFrom(':', '/', '', '.'),
                      index: fc.integer({ min: -3, max: 5 }),
                      create: fc.boolean(),
                    },
                    { requiredKeys: [] },
                  ),
                },
                { requiredKeys: [] },
              ),
              targets: fc.array(
                fc.record(
                  {
                    select: selector,
                    reject: fc.array(selector, { maxLength: 1 }),
                    fieldPaths: fc.array(fieldPath, { maxLength: 2 }),
                    options: fc.record(
                      {
                        delimiter: fc.constantFrom(':', '/', '', '.'),
                        index: fc.integer({ min: -3, max: 5 }),
                        create: fc.boolean(),
                      },
                      { requiredKeys: [] },
                    ),
                  },
                  { requiredKeys: [] },
                ),
                { maxLength: 2 },
              ),
              path: fc.constantFrom(...files, 'missing.yaml'),
            },
            { requiredKeys: [] },
          ),
          fc.dictionary(word, jsonValue, { maxKeys: 2 }),
        ),
        { maxLength: 2 },
      ),
      configMapGenerator: fc.array(generator, { maxLength: 2 }),
      secretGenerator: fc.array(
        generator.map((g) => ({ ...g, type: 'Opaque' })),
        { maxLength: 1 },
      ),
      generatorOptions: fc.record(
        { disableNameSuffixHash: fc.boolean(), labels: fc.dictionary(word, word, { maxKeys: 1 }) },
        { requiredKeys: [] },
      ),
      sortOptions: fc.oneof(
        fc.constant({ order: 'fifo' }),
        fc.record({
          order: fc.constant('legacy'),
          legacySortOptions: fc.record({
            orderFirst: fc.array(word, { maxLength: 2 }),
            orderLast: fc.array(word, { maxLength: 2 }),
          }),
        }),
      ),
      buildMetadata: fc.subarray(['originAnnotations', 'transformerAnnotations', 'managedByLabel']),
    },
    { requiredKeys: ['resources'] },
  );
};

const treeWithGeneratedKustomization = fc
  .constantFrom(...trees)
  .chain((tree) => fc.tuple(fc.constant(tree), generatedKustomization(tree)))
  .map(([tree, k]): Tree => {
    const at = posix.join(tree.entry, 'kustomization.yaml');
    return { ...tree, files: { ...tree.files, [at]: stringify(k) } };
  });

/** A corpus tree with one to three of its files mutated. */
const mutatedTree = fc
  .constantFrom(...trees)
  .chain((tree) => {
    const names = Object.keys(tree.files);
    return fc.tuple(
      fc.constant(tree),
      fc.array(fc.tuple(fc.constantFrom(...names), edits), { minLength: 1, maxLength: 3 }),
    );
  })
  .map(([tree, changes]): Tree => {
    const files = { ...tree.files };
    for (const [name, e] of changes) files[name] = mutate(files[name]!, e);
    return { ...tree, files };
  });

const buildOptions = fc.record(
  {
    generateWhenMissing: fc.boolean(),
    loadRestrictions: fc.constantFrom('rootOnly' as const, 'none' as const),
    limits: fc.record(
      {
        maxAliasCount: fc.integer({ min: 0, max: 100 }),
        maxDepth: fc.integer({ min: 1, max: 100 }),
        maxKustomizationDepth: fc.integer({ min: 1, max: 32 }),
        maxResources: fc.integer({ min: 0, max: 50 }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

// ---- YAML bombs ----------------------------------------------------------------------------------

const bomb = fc.oneof(
  // Billion laughs: each level an anchored list of `width` aliases of the one before.
  fc
    .record({ width: fc.integer({ min: 2, max: 12 }), depth: fc.integer({ min: 2, max: 9 }) })
    .map(({ width, depth }) => {
      const lines = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: bomb}',
        'data:',
        `  l0: &l0 [${Array(width).fill('"lol"').join(', ')}]`,
      ];
      for (let i = 1; i < depth; i++)
        lines.push(
          `  l${i}: &l${i} [${Array(width)
            .fill(`*l${i - 1}`)
            .join(', ')}]`,
        );
      return `${lines.join('\n')}\n`;
    }),
  // The same through merge keys, which kustomize files may use.
  fc
    .record({ width: fc.integer({ min: 2, max: 12 }), depth: fc.integer({ min: 2, max: 9 }) })
    .map(({ width, depth }) => {
      const lines = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: bomb}',
        'x:',
        '  m0: &m0 {a: 1, b: 2, c: 3}',
      ];
      for (let i = 1; i < depth; i++)
        lines.push(
          `  m${i}: &m${i} {<<: [${Array(width)
            .fill(`*m${i - 1}`)
            .join(', ')}], k${i}: [${Array(width)
            .fill(`*m${i - 1}`)
            .join(', ')}]}`,
        );
      return `${lines.join('\n')}\n`;
    }),
  // Deep nesting, flow and block (one-space indents reach the parser's own stack limit near 2,000).
  fc
    .integer({ min: 50, max: 20_000 })
    .map((n) => `kind: x\nmetadata: {name: y}\nspec: ${'['.repeat(n)}${']'.repeat(n)}\n`),
  fc
    .integer({ min: 50, max: 2_200 })
    .map(
      (n) =>
        `kind: x\nmetadata:\n  name: y\nspec:\n${Array.from({ length: n }, (_, i) => `${' '.repeat(i + 1)}k:`).join('\n')} 1\n`,
    ),
  fc
    .integer({ min: 50, max: 400 })
    .map(
      (n) =>
        `kind: x\nmetadata: {name: y}\nspec:\n${Array.from({ length: n }, (_, i) => `${' '.repeat(2 * i + 1)}-`).join('\n')} 1\n`,
    ),
  // Many documents, long keys and values.
  fc.integer({ min: 1, max: 3_000 }).map((n) => '---\n'.repeat(n)),
  fc
    .integer({ min: 1_000, max: 50_000 })
    .map((n) => `kind: ${'k'.repeat(n)}\nmetadata: {name: ${'n'.repeat(n)}}\n`),
);

describe('fuzz: kustomize parsers and builds', () => {
  test('mutated kustomization files and resources: parsed or a KustomizeError', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(
        fc.oneof(
          {
            weight: 5,
            arbitrary: fc.tuple(fc.constantFrom(...yamlTexts), edits).map(([text, e]) => mutate(text, e)),
          },
          fc.string({ maxLength: 200 }),
          fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)),
        ),
        parseBoth,
      ),
      400,
    );
  });

  test('mutated corpus trees build or fail with a KustomizeError', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(mutatedTree, buildOptions, (tree, options) => buildTree(tree, options)),
      150,
    );
    report(t);
  });

  test('generated kustomizations over corpus trees build or fail with a KustomizeError', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(treeWithGeneratedKustomization, (tree) => buildTree(tree)),
      150,
    );
    report(t);
  });

  test('YAML bombs and absurd nesting are refused, never expanded', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(bomb, (text) => {
        let resources: unknown[];
        try {
          resources = parseResources(text, 'bomb.yaml');
        } catch (err) {
          isClear(err);
          return;
        }
        // What was accepted is small: the alias limit bounds the expansion.
        assert.ok(JSON.stringify(resources).length < 50_000_000, 'expanded past the alias limit');
      }),
      40,
    );
    await new Promise((r) => setImmediate(r));
    if (warnings.length > 0)
      t.diagnostic(`${warnings.length} process warnings (yaml) collected, e.g. ${warnings[0]}`);
  });
});

describe('fuzz corpus: kustomize trees', () => {
  const bugs = knownBugs('kustomize');
  for (const tree of trees) {
    test(tree.name, { todo: bugs[tree.name] }, async () => {
      strict = true;
      try {
        await buildTree(tree);
      } finally {
        strict = false;
      }
    });
  }
});
