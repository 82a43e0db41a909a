import type { ImagePolicyChoice } from '@mooring/api';
import semver from 'semver';

/** `spec.filterTags`: a regular expression tags must match and what to order them by. */
export interface TagFilterSpec {
  pattern?: string;
  extract?: string;
}

/** A tag that passed the filter, with the value the policy orders it by. */
export interface CandidateTag {
  tag: string;
  value: string;
}

/** The policy or filter cannot be used as written; retrying will not help until the spec changes. */
export class InvalidPolicyError extends Error {
  override name = 'InvalidPolicyError';
}

/**
 * Compiles a Flux (Go RE2) pattern for JavaScript: Go's `(?P<name>…)` groups become `(?<name>…)`.
 * Patterns are anchored by the user, as in Flux.
 */
export function compilePattern(pattern: string, what: string): RegExp {
  try {
    return new RegExp(pattern.replaceAll('(?P<', '(?<'), 'u');
  } catch (err) {
    throw new InvalidPolicyError(
      `${what} ${JSON.stringify(pattern)} is not a valid regular expression: ${(err as Error).message}`,
    );
  }
}

/** Go's regexp.Expand: `$name`, `${name}` and `$1` take the match's groups; `$$` is a dollar. */
export function expandTemplate(template: string, match: RegExpExecArray): string {
  return template.replace(
    /\$(\$|\{(\w+)\}|(\w+))/g,
    (_all, whole: string, braced?: string, bare?: string) => {
      if (whole === '$') return '$';
      const name = (braced ?? bare)!;
      const value = /^\d+$/.test(name) ? match[Number(name)] : match.groups?.[name];
      return value ?? '';
    },
  );
}

/** Tags that match `filter.pattern` (all tags without a filter), each with its `extract`ed value. */
export function filterTags(tags: readonly string[], filter: TagFilterSpec | undefined): CandidateTag[] {
  if (!filter?.pattern) return tags.map((tag) => ({ tag, value: tag }));
  const re = compilePattern(filter.pattern, 'filterTags.pattern');
  const out: CandidateTag[] = [];
  for (const tag of tags) {
    const match = re.exec(tag);
    if (!match) continue;
    out.push({ tag, value: filter.extract ? expandTemplate(filter.extract, match) : tag });
  }
  return out;
}

/** Masterminds ranges separate constraints with commas; node-semver with spaces. */
function semverRange(range: string): string {
  const normalised = range.replaceAll(',', ' ').trim();
  if (semver.validRange(normalised) === null) {
    throw new InvalidPolicyError(`semver range ${JSON.stringify(range)} is not valid`);
  }
  return normalised;
}

/** Ties (equal order values) go to the tag that sorts last, so the choice never depends on list order. */
function pickLast<V>(items: { tag: string; key: V }[], compare: (a: V, b: V) => number): string | undefined {
  let best: { tag: string; key: V } | undefined;
  for (const item of items) {
    const order = best ? compare(item.key, best.key) : 1;
    if (order > 0 || (order === 0 && best && item.tag > best.tag)) best = item;
  }
  return best?.tag;
}

/**
 * The latest tag under the policy, or undefined when no tag qualifies. semver: the highest version
 * in range (tags that are not semver are ignored); alphabetical and numerical: the last tag in the
 * chosen order, so `desc` picks the lowest (Flux's rule). Numerical ignores values that are not numbers.
 */
export function selectLatest(
  tags: readonly string[],
  policy: ImagePolicyChoice,
  filter?: TagFilterSpec,
): string | undefined {
  const candidates = filterTags(tags, filter);
  if (policy.semver) {
    const range = semverRange(policy.semver.range);
    const items: { tag: string; key: semver.SemVer }[] = [];
    for (const c of candidates) {
      const version = semver.parse(c.value);
      if (version && semver.satisfies(version, range)) items.push({ tag: c.tag, key: version });
    }
    return pickLast(items, (a, b) => semver.compare(a, b));
  }
  if (policy.alphabetical) {
    const sign = policy.alphabetical.order === 'desc' ? -1 : 1;
    const items = candidates.map((c) => ({ tag: c.tag, key: c.value }));
    return pickLast(items, (a, b) => sign * (a < b ? -1 : a > b ? 1 : 0));
  }
  if (policy.numerical) {
    const sign = policy.numerical.order === 'desc' ? -1 : 1;
    const items: { tag: string; key: number }[] = [];
    for (const c of candidates) {
      // Number('') is 0 and Number('0x1f') is 31: only plain decimal numbers count.
      if (!/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(c.value)) continue;
      items.push({ tag: c.tag, key: Number(c.value) });
    }
    return pickLast(items, (a, b) => sign * (a - b));
  }
  throw new InvalidPolicyError('policy must set one of semver, alphabetical and numerical');
}
