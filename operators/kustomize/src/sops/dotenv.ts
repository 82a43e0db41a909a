import type { MapNode } from './tree.ts';

/** One line of a sops dotenv file: a comment or a `KEY=value` entry. */
export type DotenvLine = { comment: string } | { key: string; value: string };

/**
 * Splits dotenv text the way sops does (stores/dotenv LoadPlainFile): no quoting rules, the
 * first `=` ends the key, `\n` escapes a newline, empty lines vanish. Returns undefined on a line
 * with no `=`.
 */
export function parseDotenv(text: string): DotenvLine[] | undefined {
  const lines: DotenvLine[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      lines.push({ comment: line.slice(1) });
      continue;
    }
    const eq = line.indexOf('=');
    if (eq === -1) return undefined;
    lines.push({ key: line.slice(0, eq), value: line.slice(eq + 1).replaceAll('\\n', '\n') });
  }
  return lines;
}

/** The entries (not comments, not `sops_*`) as a one-level tree whose leaves write into `lines`. */
export function dotenvTree(lines: DotenvLine[]): MapNode {
  const entries: MapNode['entries'] = [];
  for (const line of lines) {
    if (!('key' in line)) continue;
    entries.push([
      line.key,
      {
        kind: 'leaf',
        value: line.value,
        set(plain) {
          this.value = plain;
          line.value = String(plain);
        },
      },
    ]);
  }
  return { kind: 'map', entries };
}

/** Prints entries and comments as sops prints a plain dotenv file. */
export function printDotenv(lines: DotenvLine[]): string {
  return lines
    .map((line) =>
      'key' in line ? `${line.key}=${line.value.replaceAll('\n', '\\n')}\n` : `#${line.comment}\n`,
    )
    .join('');
}
