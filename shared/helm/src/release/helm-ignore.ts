// .helmignore as Helm's loader reads it (pkg/ignore/rules.go, v3.22.0), with Go's filepath.Match
// for the patterns, so chartRecordOf leaves out exactly the files `helm install` leaves out.

interface Pattern {
  negate: boolean;
  mustDir: boolean;
  match: (path: string) => boolean;
}

/** Go's filepath.Match pattern as a RegExp over one slash-separated path; undefined if malformed. */
function goGlob(pattern: string): RegExp | undefined {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      if (i + 1 >= pattern.length) return undefined;
      re += literal(pattern.charAt(++i));
    } else if (c === '[') {
      let j = i + 1;
      let cls = '';
      if (pattern.charAt(j) === '^') {
        cls += '^';
        j++;
      }
      let closed = false;
      let first = true;
      for (; j < pattern.length; j++) {
        let ch = pattern.charAt(j);
        if (ch === ']' && !first) {
          closed = true;
          break;
        }
        first = false;
        if (ch === '\\') {
          if (j + 1 >= pattern.length) return undefined;
          ch = pattern.charAt(++j);
        }
        cls += ch === ']' || ch === '\\' || ch === '^' ? `\\${ch}` : ch === '-' ? '-' : literal(ch);
      }
      if (!closed) return undefined;
      // A negated class never matches the separator in Go either.
      re += cls.startsWith('^') ? `[${cls}/]` : `[${cls}]`;
      i = j;
    } else re += literal(c);
  }
  try {
    return new RegExp(`^${re}$`, 'u');
  } catch {
    return undefined;
  }
}

function literal(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/** The rules of a .helmignore file plus Helm's default (`templates/.?*`); throws on a bad rule. */
export class HelmIgnore {
  readonly #patterns: Pattern[] = [];

  constructor(text = '') {
    for (const line of text.split('\n')) this.#add(line);
    this.#add('templates/.?*');
  }

  #add(raw: string): void {
    let rule = raw.trim();
    if (rule === '' || rule.startsWith('#')) return;
    if (rule.includes('**'))
      throw new Error(`.helmignore rule ${JSON.stringify(rule)}: double-star (**) syntax is not supported`);
    if (!goGlob(rule)) throw new Error(`.helmignore rule ${JSON.stringify(rule)}: syntax error in pattern`);
    const negate = rule.startsWith('!');
    if (negate) rule = rule.slice(1);
    const mustDir = rule.endsWith('/');
    if (mustDir) rule = rule.slice(0, -1);
    let match: (path: string) => boolean;
    if (rule.startsWith('/')) {
      const re = goGlob(rule.replace(/^\/+/, ''));
      match = (p) => re?.test(p) ?? false;
    } else if (rule.includes('/')) {
      const re = goGlob(rule);
      match = (p) => re?.test(p) ?? false;
    } else {
      const re = goGlob(rule);
      match = (p) => re?.test(p.slice(p.lastIndexOf('/') + 1)) ?? false;
    }
    this.#patterns.push({ negate, mustDir, match });
  }

  /** Whether `path` (relative to the chart, slash-separated) is ignored; Helm's first match wins. */
  ignores(path: string, isDir: boolean): boolean {
    if (path === '' || path === '.' || path === './') return false;
    for (const p of this.#patterns) {
      if (p.negate) {
        // Helm's own (odd) negation: a path a negated rule does not match is ignored.
        if (p.mustDir && !isDir) return true;
        if (!p.match(path)) return true;
        continue;
      }
      if (p.mustDir && !isDir) continue;
      if (p.match(path)) return true;
    }
    return false;
  }
}
