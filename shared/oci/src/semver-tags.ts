import semver from 'semver';

/**
 * The highest tag that is a semantic version inside `range` (and matches `filter` when given).
 * Tags that are not semver are ignored; a leading `v` is allowed. Throws on an invalid range.
 */
export function pickSemverTag(tags: readonly string[], range: string, filter?: RegExp): string | undefined {
  if (semver.validRange(range) === null)
    throw new Error(`semver range ${JSON.stringify(range)} is not valid.`);
  let best: { tag: string; version: semver.SemVer } | undefined;
  for (const tag of tags) {
    if (filter) {
      filter.lastIndex = 0; // a /g or /y regex keeps state between test() calls
      if (!filter.test(tag)) continue;
    }
    const version = semver.parse(tag);
    if (!version || !semver.satisfies(version, range)) continue;
    const order = best ? semver.compare(version, best.version) : 1;
    // Equal versions (v1.0.0 and 1.0.0, or build metadata): pick by tag text so the result is stable.
    if (order > 0 || (order === 0 && best && tag > best.tag)) best = { tag, version };
  }
  return best?.tag;
}
