// Reads test/conformance/kustomize/known-gaps.md: fixtures the engine is allowed to fail, with why.
import { readFileSync } from 'node:fs';

/** Fixture name → reason, from the Markdown table `| fixture | reason |` in a known-gaps file. */
export function readKnownGaps(file: string): Map<string, string> {
  const gaps = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const row = line.trim().match(/^\|([^|]*)\|(.*)\|$/);
    if (!row) continue;
    const fixture = row[1]!.trim().replace(/^`(.*)`$/, '$1');
    // The header row and the |---|---| separator are not fixtures; a reason may contain pipes.
    if (!fixture || fixture === 'fixture' || /^:?-+:?$/.test(fixture)) continue;
    if (gaps.has(fixture)) throw new Error(`known-gaps lists fixture ${fixture} twice.`);
    gaps.set(fixture, row[2]!.trim());
  }
  return gaps;
}
