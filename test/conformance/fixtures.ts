// Locates the kustomize conformance fixtures: test/conformance/kustomize/<fixture>/{input/,entry.txt,expected.*}.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory that holds one folder per fixture. */
export const FIXTURES_DIR = fileURLToPath(new URL('./kustomize/', import.meta.url));

/** Names of the fixture directories (those with an input/ tree), sorted. */
export function listFixtures(dir: string = FIXTURES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'input')))
    .map((e) => e.name)
    .sort();
}

/** The path, relative to the fixture's input/, that it builds: entry.txt's one line, or `.`. */
export function fixtureEntry(fixtureDir: string): string {
  const file = join(fixtureDir, 'entry.txt');
  if (!existsSync(file)) return '.';
  return readFileSync(file, 'utf8').trim() || '.';
}
