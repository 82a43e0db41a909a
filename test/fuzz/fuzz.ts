// Shared set-up of the fuzz suite: seeded fast-check runs with a fixed count for `npm test`, more
// through MOORING_FUZZ_RUNS, and a failure message that says how to replay the failing case.
//
//   MOORING_FUZZ_RUNS=100000   runs per property (default: each property's own small number)
//   MOORING_FUZZ_SCALE=0.1     scales each property's own number (npm run test:unit's quick pass)
//   MOORING_FUZZ_SEED=123      the seed of every property (default: fixed per property; `random` picks one)
//   MOORING_FUZZ_PATH=0:1:2    with the seed, replays one case (and its shrinking) only
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';

export { fc };

export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs per property: MOORING_FUZZ_RUNS when set, else the property's bounded default. */
export function runs(defaultRuns: number): number {
  const env = process.env.MOORING_FUZZ_RUNS;
  if (env === undefined || env === '') return Math.max(1, Math.round(defaultRuns * scale()));
  const n = Number(env);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`MOORING_FUZZ_RUNS must be a positive integer, got ${env}`);
  return n;
}

function scale(): number {
  const env = process.env.MOORING_FUZZ_SCALE;
  if (env === undefined || env === '') return 1;
  const n = Number(env);
  if (!(n > 0 && n <= 1)) throw new Error(`MOORING_FUZZ_SCALE must be in (0, 1], got ${env}`);
  return n;
}

/** A stable 32-bit seed from a property's name, so each property explores its own inputs. */
function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

function chosenSeed(name: string): number {
  const env = process.env.MOORING_FUZZ_SEED;
  if (env === undefined || env === '') return seedOf(name);
  if (env === 'random') return (Math.random() * 2 ** 32) | 0;
  const n = Number(env);
  if (!Number.isInteger(n)) throw new Error(`MOORING_FUZZ_SEED must be an integer or "random", got ${env}`);
  return n;
}

/**
 * Checks a property the way fc.assert does, seeded, and on failure throws fast-check's report plus
 * the command that replays the case (`file` is the test file's import.meta.url).
 */
export async function check<Ts>(
  t: TestContext,
  file: string,
  property: fc.IAsyncPropertyWithHooks<Ts> | fc.IPropertyWithHooks<Ts>,
  defaultRuns: number,
  extra: Omit<fc.Parameters<Ts>, 'seed' | 'numRuns' | 'path'> = {},
): Promise<void> {
  const seed = chosenSeed(t.name);
  const numRuns = runs(defaultRuns);
  const path = process.env.MOORING_FUZZ_PATH || undefined;
  t.diagnostic(`seed ${seed}, ${numRuns} runs${path ? `, path ${path}` : ''}`);
  const details = await fc.check(property as fc.IAsyncProperty<Ts>, {
    ...extra,
    seed,
    numRuns,
    ...(path ? { path } : {}),
  });
  if (!details.failed) return;
  const report = fc.defaultReportMessage(details) ?? 'the property failed';
  const cause = details.errorInstance;
  const why = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  const testFile = relative(REPO_ROOT, fileURLToPath(file));
  throw new Error(
    `${report}\n\nthe failing case threw: ${why}\n\nreplay: MOORING_FUZZ_SEED=${details.seed} MOORING_FUZZ_PATH=${details.counterexamplePath ?? ''} ` +
      `node --import tsx --test --test-name-pattern=${JSON.stringify(t.name)} ${testFile}`,
  );
}

/** The files of one corpus folder (sorted), as [name, bytes]; README.md is not an input. */
export function corpusFiles(target: string): [string, Buffer][] {
  const dir = join(CORPUS_DIR, target);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'README.md' && e.name !== 'known-bugs.json')
    .map((e) => e.name)
    .sort()
    .map((name) => [name, readFileSync(join(dir, name))]);
}

/**
 * Corpus entries that reproduce a bug not fixed yet: file name → the reason, from the folder's
 * known-bugs.json. Their tests are marked todo, so they run and report without failing the suite.
 */
export function knownBugs(target: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(join(CORPUS_DIR, target, 'known-bugs.json'), 'utf8')) as Record<
      string,
      string
    >;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

/** Error classes a target may throw on bad input; anything else (TypeError, RangeError, …) is a bug. */
export function assertClearError(err: unknown, allowed: (abstract new (...args: never[]) => Error)[]): void {
  if (allowed.some((cls) => err instanceof cls) && (err as Error).message.length > 0) return;
  const e = err as Error;
  const detail = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(err);
  throw new Error(`expected one of ${allowed.map((c) => c.name).join(', ')}, got ${detail}`);
}

// ---- mutations of text inputs -------------------------------------------------------------------

/** Pieces that mean something to YAML (and JSON, dotenv, kustomize), spliced into real inputs. */
const YAML_TOKENS = [
  ': ',
  '- ',
  '-',
  '---\n',
  '...\n',
  '{',
  '}',
  '[',
  ']',
  ',',
  '&a ',
  '*a',
  '<<: *a\n',
  '!!binary ',
  '!!str ',
  '!!int ',
  '!!map ',
  '!!seq ',
  '!custom ',
  '? ',
  '|',
  '|-\n',
  '>',
  '#',
  "'",
  '"',
  '\\',
  '\t',
  '\n',
  '\n  ',
  '\r\n',
  '\0',
  '\uFEFF',
  '\u2028',
  '%YAML 1.1\n',
  '%TAG ! tag:x,2000:\n',
  'null',
  '~',
  '[]',
  '{}',
  'true',
  'y',
  'on',
  '0x1F',
  '0o17',
  '0755',
  '1e400',
  '-.inf',
  '.nan',
  '99999999999999999999999',
  '2001-12-14t21:59:43.10-05:00',
  '1_000',
  '../',
  '/etc/passwd',
  '*',
  '$patch: delete',
  '$patch: replace',
  '$retainKeys: [a]',
  '$setElementOrder/containers: [{name: x}]',
  '$deleteFromPrimitiveList/args: [a]',
  'kind: ',
  'metadata: ',
  'name: x',
  'apiVersion: v1',
  'items: ',
  'resources: ',
  'patches: ',
  'replacements: ',
  'target: ',
  'path: ',
  'fieldPaths: [spec.x]',
  'op: ',
  'value: ',
  'ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]',
  // Keys every JavaScript object inherits, which a lookup table must not find.
  '__proto__: ',
  'constructor: ',
  'hasOwnProperty: 1',
  'toString: x',
  'valueOf: ',
  'é',
  '😀',
];

/** One edit at a relative position (0..1) of the text. */
type Edit =
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number; len: number }
  | { op: 'duplicateLine'; at: number }
  | { op: 'swapLines'; at: number; with: number }
  | { op: 'truncate'; at: number }
  | { op: 'replaceValue'; at: number; text: string }
  | { op: 'indent'; at: number; by: number };

const position = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const snippet = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...YAML_TOKENS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), at: position, text: snippet }),
  fc.record({ op: fc.constant('delete' as const), at: position, len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ op: fc.constant('duplicateLine' as const), at: position }),
  fc.record({ op: fc.constant('swapLines' as const), at: position, with: position }),
  fc.record({ op: fc.constant('truncate' as const), at: position }),
  fc.record({ op: fc.constant('replaceValue' as const), at: position, text: snippet }),
  fc.record({ op: fc.constant('indent' as const), at: position, by: fc.integer({ min: -4, max: 4 }) }),
);

function applyEdit(text: string, e: Edit): string {
  const at = Math.floor(e.at * (text.length + 1));
  const lines = text.split('\n');
  const line = Math.min(lines.length - 1, Math.floor(e.at * lines.length));
  switch (e.op) {
    case 'insert':
      return text.slice(0, at) + e.text + text.slice(at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + e.len);
    case 'truncate':
      return text.slice(0, at);
    case 'duplicateLine':
      lines.splice(line, 0, lines[line] ?? '');
      return lines.join('\n');
    case 'swapLines': {
      const other = Math.min(lines.length - 1, Math.floor(e.with * lines.length));
      [lines[line], lines[other]] = [lines[other] ?? '', lines[line] ?? ''];
      return lines.join('\n');
    }
    case 'replaceValue': {
      // The value after the first `: ` (or `=`) of the line, the edit a user most often gets wrong.
      const l = lines[line] ?? '';
      const colon = l.indexOf(': ') >= 0 ? l.indexOf(': ') + 2 : l.indexOf('=') + 1;
      lines[line] = colon > 0 ? l.slice(0, colon) + e.text : e.text;
      return lines.join('\n');
    }
    case 'indent': {
      const l = lines[line] ?? '';
      lines[line] = e.by >= 0 ? ' '.repeat(e.by) + l : l.replace(new RegExp(`^ {0,${-e.by}}`), '');
      return lines.join('\n');
    }
  }
}

/** One to four edits of a text, applied in order. */
export const edits = fc.array(edit, { minLength: 1, maxLength: 4 });

export function mutate(text: string, list: readonly Edit[]): string {
  return list.reduce(applyEdit, text);
}

/** Byte-level damage for binary inputs: flips, overwrites, cuts. */
export type ByteEdit =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'cut'; at: number }
  | { op: 'splice'; at: number; bytes: Uint8Array };

export const byteEdits = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('flip' as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ op: fc.constant('set' as const), at: position, value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ op: fc.constant('cut' as const), at: position }),
    fc.record({ op: fc.constant('splice' as const), at: position, bytes: fc.uint8Array({ maxLength: 64 }) }),
  ),
  { minLength: 1, maxLength: 6 },
);

export function mutateBytes(input: Buffer, list: readonly ByteEdit[]): Buffer {
  let b = Buffer.from(input);
  for (const e of list) {
    const at = Math.floor(e.at * b.length);
    if (e.op === 'cut') b = b.subarray(0, at);
    else if (e.op === 'splice') b = Buffer.concat([b.subarray(0, at), e.bytes, b.subarray(at)]);
    else if (at < b.length) b[at] = e.op === 'flip' ? b[at]! ^ (1 << e.bit) : e.value;
  }
  return b;
}

/**
 * The yaml library reports odd input (unknown directives, unresolved tags) through
 * process.emitWarning, quoting the input, unless its logLevel is lowered; thousands of fuzz cases
 * would flood the test output. Collects them instead (see test/fuzz/README.md) and returns them.
 */
export function collectProcessWarnings(): string[] {
  const seen: string[] = [];
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (seen.length < 1000) seen.push(`${w.name}: ${w.message}`);
  });
  return seen;
}
