// Regenerates the expected outputs of the kustomize conformance fixtures with the Go reference binary.
// Usage: node --import tsx hack/gen-kustomize-conformance.ts [--check] [fixture-substring...]
// Each test/conformance/kustomize/<fixture>/ holds input/ and gets expected.yaml (the output of
// `bin/kustomize build input/<entry>`) or expected-error.txt (kustomize failed). <entry> is the
// one line of <fixture>/entry.txt, or `.` without it. --check writes nothing and exits 1 when a
// committed expectation differs from what the binary produces now. bin/kustomize is (re)built first
// when hack/tools/kustomize pins another version.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FIXTURES_DIR, fixtureEntry, listFixtures } from '../test/conformance/fixtures.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KUSTOMIZE = join(ROOT, 'bin/kustomize');

/** The expectation one fixture should carry: exactly one of the two files. */
interface Expectation {
  file: 'expected.yaml' | 'expected-error.txt';
  text: string;
}

async function reference(fixtureDir: string): Promise<Expectation> {
  const entry = fixtureEntry(fixtureDir);
  try {
    // cwd is the fixture, so messages name relative paths wherever kustomize allows it.
    const { stdout } = await run(KUSTOMIZE, ['build', join('input', entry)], {
      cwd: fixtureDir,
      maxBuffer: 64 * 1024 * 1024,
      // A bare environment: no KUSTOMIZE_* or XDG settings of the caller's may change the output.
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
    });
    return { file: 'expected.yaml', text: stdout };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? String(err);
    // Absolute paths would make the file machine-specific; the test never compares the message.
    // Go prints some pointers (`&{0xc000…}`) in messages; they would change on every run.
    const text = stderr
      .split(fixtureDir)
      .join('<fixture>')
      .replace(/0x[0-9a-f]{6,}/g, '0x…');
    return { file: 'expected-error.txt', text };
  }
}

/** Builds bin/kustomize when it is missing or older than hack/tools/kustomize pins (a no-op otherwise). */
async function ensureKustomize(): Promise<void> {
  const { stdout } = await run('bash', [join(ROOT, 'hack/build-tools.sh'), 'kustomize'], { cwd: ROOT });
  if (!stdout.includes('is up to date')) process.stderr.write(stdout);
}

/** Maps items with at most `limit` calls in flight, keeping their order (8 lines, not worth a dependency). */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const filters = args.filter((a) => !a.startsWith('--'));
  await ensureKustomize();
  const names = listFixtures().filter((n) => filters.length === 0 || filters.some((f) => n.includes(f)));
  const stale: string[] = [];
  let errors = 0;
  let written = 0;
  // Two kustomize processes at a time: the machines have 2 cores.
  const expectations = await mapLimit(names, 2, (name) => reference(join(FIXTURES_DIR, name)));
  for (const [i, name] of names.entries()) {
    const dir = join(FIXTURES_DIR, name);
    const want = expectations[i]!;
    if (want.file === 'expected-error.txt') errors++;
    const other = want.file === 'expected.yaml' ? 'expected-error.txt' : 'expected.yaml';
    const current = existsSync(join(dir, want.file))
      ? await readFile(join(dir, want.file), 'utf8')
      : undefined;
    const sameOutcome = current !== undefined && !existsSync(join(dir, other));
    if (sameOutcome && current === want.text) continue;
    // Error text is informational (only whether kustomize fails is part of the contract), so a
    // changed message is rewritten but is not drift for --check.
    const drifted = !sameOutcome || want.file === 'expected.yaml';
    if (drifted) stale.push(name);
    if (check) continue;
    await writeFile(join(dir, want.file), want.text);
    await rm(join(dir, other), { force: true });
    written++;
    console.log(`wrote ${name}/${want.file}`);
  }
  if (check && stale.length > 0) {
    for (const name of stale) console.error(`${name}: committed expectation differs from bin/kustomize`);
    console.error(
      'kustomize conformance fixtures are stale: run `node --import tsx hack/gen-kustomize-conformance.ts`.',
    );
    return 1;
  }
  const done = check ? 'none stale' : `${written} file(s) written`;
  console.log(`${names.length} fixtures (${errors} expect an error), ${done}`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
