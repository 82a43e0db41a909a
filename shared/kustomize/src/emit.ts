import { exactIntText } from './exact-ints.ts';
import type { JsonObject, JsonValue, Resource } from './resource.ts';

// `kustomize build` prints each resource through sigs.k8s.io/yaml (JSON → go-yaml v2 Marshal), so the bytes
// are go-yaml v2's emitter: keys sorted with its "natural" order, YAML 1.1 look-alikes quoted, plain and
// quoted scalars folded past column 80, multi-line strings as literal blocks. No npm YAML library reproduces
// that byte for byte, so this file ports the parts of go-yaml v2 (emitterc.go, encode.go, sorter.go) we need.

const bestIndent = 2;
const bestWidth = 80;

// go-yaml v2 resolve(): plain strings that a YAML 1.1 reader would retype must be quoted.
// biome-ignore format: a table
const resolveMapWords = new Set([
  'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON',
  'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF',
  '', '~', 'null', 'Null', 'NULL', '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF',
  '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '<<',
]);
const yamlStyleFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const base60Float = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** Go's strconv.ParseInt/ParseUint(s, 0, 64) succeeds. */
function goIntSyntax(s: string): boolean {
  const body = s.startsWith('+') || s.startsWith('-') ? s.slice(1) : s;
  let ok: boolean;
  if (/^0[xX]/.test(body)) ok = /^0[xX][0-9a-fA-F]+$/.test(body);
  else if (/^0[oO]/.test(body)) ok = /^0[oO][0-7]+$/.test(body);
  else if (/^0[bB]/.test(body)) ok = /^0[bB][01]+$/.test(body);
  else if (body.length > 1 && body.startsWith('0')) ok = /^0[0-7]+$/.test(body);
  else ok = /^[0-9]+$/.test(body);
  if (!ok) return false;
  // Overflowing int64 and uint64 fails in Go; approximate with the magnitude.
  const digits = body.replace(/^0[xXoObB]?/, '');
  return digits.length < 70;
}

/** Go's time.Parse with go-yaml's allowed timestamp layouts. */
function isTimestamp(s: string): boolean {
  const m =
    /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:([Tt])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})|( )([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?)?$/.exec(
      s,
    );
  if (!m) return false;
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(Number(m[1]), month, 0)).getUTCDate())
    return false;
  const h = Number(m[5] ?? m[11] ?? 0);
  const min = Number(m[6] ?? m[12] ?? 0);
  const sec = Number(m[7] ?? m[13] ?? 0);
  return h < 24 && min < 60 && sec < 60;
}

/** True when go-yaml v2 would read the unquoted text back as a string (encode.go stringv). */
function plainIsString(s: string): boolean {
  if (resolveMapWords.has(s)) return false;
  const c = s[0] ?? '';
  if (c === '.') {
    if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s)) return false;
  } else if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    if (isTimestamp(s)) return false;
    const plain = s.replaceAll('_', '');
    if (goIntSyntax(plain)) return false;
    if (yamlStyleFloat.test(plain)) return false;
    if (base60Float.test(s)) return false;
  }
  return true;
}

const isBreak = (c: number): boolean =>
  c === 0x0d || c === 0x0a || c === 0x85 || c === 0x2028 || c === 0x2029;
const isPrintable = (c: number): boolean =>
  c === 0x0a ||
  (c >= 0x20 && c <= 0x7e) ||
  (c >= 0xa0 && c <= 0xd7ff) ||
  (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
const isBlankZ = (c: number | undefined): boolean =>
  c === undefined || c === 0x20 || c === 0x09 || isBreak(c);

interface ScalarAnalysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** yaml_emitter_analyze_scalar, for block context. */
function analyze(cps: number[]): ScalarAnalysis {
  if (cps.length === 0) {
    return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  }
  let blockIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  if (cps.length >= 3) {
    const [a, b, c] = cps;
    if ((a === 0x2d && b === 0x2d && c === 0x2d) || (a === 0x2e && b === 0x2e && c === 0x2e))
      blockIndicators = true;
  }
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i] as number;
    const followedByWhitespace = isBlankZ(cps[i + 1]);
    const ch = String.fromCodePoint(c);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      else if ((ch === '?' || ch === ':' || ch === '-') && followedByWhitespace) blockIndicators = true;
    } else if (ch === ':' && followedByWhitespace) blockIndicators = true;
    else if (ch === '#' && precededByWhitespace) blockIndicators = true;
    if (!isPrintable(c)) special = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === cps.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === cps.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankZ(c);
  }
  const result: ScalarAnalysis = {
    multiline: lineBreaks,
    blockPlainAllowed: true,
    singleQuotedAllowed: true,
    blockAllowed: true,
  };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) result.blockPlainAllowed = false;
  if (trailingSpace) result.blockAllowed = false;
  if (breakSpace) {
    result.blockPlainAllowed = false;
    result.singleQuotedAllowed = false;
  }
  if (spaceBreak || special) {
    result.blockPlainAllowed = false;
    result.singleQuotedAllowed = false;
    result.blockAllowed = false;
  }
  if (lineBreaks || blockIndicators) result.blockPlainAllowed = false;
  return result;
}

type Style = 'plain' | 'single' | 'double' | 'literal';

/** The state of go-yaml's emitter that affects output bytes. */
class Emitter {
  // One growing string: V8 concatenates into ropes, cheaper than an array of one-character pieces.
  out = '';
  readonly infos: Map<string, StringInfo>;

  constructor(infos: Map<string, StringInfo>) {
    this.infos = infos;
  }
  column = 0;
  whitespace = true;
  indention = true;
  openEnded = false;
  indent = -1;
  indents: number[] = [];

  put(s: string): void {
    this.out += s;
    this.column += s.length;
  }
  putCp(c: number): void {
    this.out += String.fromCodePoint(c);
    this.column++;
  }
  putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }
  writeBreakCp(c: number): void {
    if (c === 0x0a) this.putBreak();
    else {
      this.out += String.fromCodePoint(c);
      this.column = 0;
    }
  }
  increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? bestIndent : 0;
    else if (!indentless) this.indent += bestIndent;
  }
  popIndent(): void {
    this.indent = this.indents.pop() as number;
  }
  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace))
      this.putBreak();
    if (this.column < indent) this.put(' '.repeat(indent - this.column));
    this.whitespace = true;
    this.indention = true;
  }
  writeIndicator(
    indicator: string,
    needWhitespace: boolean,
    isWhitespace: boolean,
    isIndention: boolean,
  ): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(indicator);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
    this.openEnded = false;
  }

  writePlain(cps: number[], allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i] as number;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > bestWidth && cps[i + 1] !== 0x20) this.writeIndent();
        else this.putCp(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreakCp(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.putCp(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  writeSingle(cps: number[], allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i] as number;
      if (c === 0x20) {
        if (
          allowBreaks &&
          !spaces &&
          this.column > bestWidth &&
          i > 0 &&
          i < cps.length - 1 &&
          cps[i + 1] !== 0x20
        ) {
          this.writeIndent();
        } else this.putCp(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreakCp(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (c === 0x27) this.put("'");
        this.putCp(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeDouble(cps: number[], allowBreaks: boolean): void {
    let spaces = false;
    this.writeIndicator('"', true, false, false);
    const bom = cps[0] === 0xfeff;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i] as number;
      if (!isPrintable(c) || bom || isBreak(c) || c === 0x22 || c === 0x5c) {
        this.put(escapeCodePoint(c));
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > bestWidth && i > 0 && i < cps.length - 1) {
          this.writeIndent();
          if (cps[i + 1] === 0x20) this.put('\\');
        } else this.putCp(c);
        spaces = true;
      } else {
        this.putCp(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeLiteral(cps: number[]): void {
    this.writeIndicator('|', true, false, false);
    // yaml_emitter_write_block_scalar_hints
    const first = cps[0];
    if (first !== undefined && (first === 0x20 || isBreak(first))) {
      this.writeIndicator(String(bestIndent), false, false, false);
    }
    this.openEnded = false;
    let chomp = '';
    const last = cps[cps.length - 1];
    if (last === undefined || !isBreak(last)) chomp = '-';
    else if (cps.length === 1 || isBreak(cps[cps.length - 2] as number)) {
      chomp = '+';
      this.openEnded = true;
    }
    if (chomp !== '') this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of cps) {
      if (isBreak(c)) {
        this.writeBreakCp(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.putCp(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

// biome-ignore format: a table
const namedEscapes: Record<number, string> = {
  0: '0', 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 27: 'e',
  34: '"', 92: '\\', 133: 'N', 160: '_', 8232: 'L', 8233: 'P',
};

function escapeCodePoint(c: number): string {
  const named = namedEscapes[c];
  if (named !== undefined) return `\\${named}`;
  const hex = c.toString(16).toUpperCase();
  if (c <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (c <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

interface Context {
  sequence: boolean;
  mapping: boolean;
  simpleKey: boolean;
}

/** What emitting a string needs that depends on the string alone. */
interface StringInfo {
  cps: number[];
  analysis: ScalarAnalysis;
  /** The style go-yaml's stringv asks for. */
  requested: Style;
  /** yaml_emitter_check_simple_key, for the string as a mapping key. */
  simpleKey: boolean;
}

// Manifests repeat the same keys and many values thousands of times: one render analyses each text
// once. The cache lives for one toYAML call only, so no value (a Secret's data) outlives the render.
const MAX_CACHED_LENGTH = 256;

function stringInfo(e: Emitter, s: string): StringInfo {
  let info = e.infos.get(s);
  if (info !== undefined) return info;
  const cps = codePoints(s);
  let requested: Style;
  if (s.includes('\n')) requested = 'literal';
  else if (plainIsString(s)) requested = 'plain';
  else requested = 'double';
  info = {
    cps,
    analysis: analyze(cps),
    requested,
    simpleKey: !/[\r\n\u0085\u2028\u2029]/.test(s) && Buffer.byteLength(s) <= 128,
  };
  // Long texts (file contents in ConfigMaps) rarely repeat and would pin their code points in memory.
  if (s.length > MAX_CACHED_LENGTH) return info;
  e.infos.set(s, info);
  return info;
}

/** Emits a string scalar: go-yaml's stringv picks the requested style, the emitter may downgrade it. */
function emitString(e: Emitter, s: string, ctx: Context): void {
  const info = stringInfo(e, s);
  emitScalar(e, info.cps, info.requested, ctx, info.analysis, s);
}

/**
 * Emits a plain scalar known to need no quoting (a number, boolean or null): what writePlain does for
 * text without spaces or breaks, in one step.
 */
function emitPlainWord(e: Emitter, text: string): void {
  if (!e.whitespace) e.put(' ');
  e.put(text);
  e.whitespace = false;
  e.indention = false;
}

function emitScalar(
  e: Emitter,
  cps: number[],
  requested: Style,
  ctx: Context,
  analysis?: ScalarAnalysis,
  text?: string,
): void {
  const a = analysis ?? analyze(cps);
  let style = requested;
  if (ctx.simpleKey && a.multiline) style = 'double';
  if (style === 'plain') {
    if (!a.blockPlainAllowed) style = 'single';
    if (cps.length === 0 && ctx.simpleKey) style = 'single';
  }
  if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
  if (style === 'literal' && (!a.blockAllowed || ctx.simpleKey)) style = 'double';
  const allowBreaks = !ctx.simpleKey;
  // A plain scalar that cannot reach the fold column (or may not fold) is written whole; the text
  // must count one column per UTF-16 unit, as the code points do. A plain scalar never has breaks.
  if (
    style === 'plain' &&
    text !== undefined &&
    text.length === cps.length &&
    (!allowBreaks || e.column + 1 + cps.length <= bestWidth)
  ) {
    emitPlainWord(e, text);
    return;
  }
  e.increaseIndent(true, false);
  if (style === 'plain') e.writePlain(cps, allowBreaks);
  else if (style === 'single') e.writeSingle(cps, allowBreaks);
  else if (style === 'double') e.writeDouble(cps, allowBreaks);
  else e.writeLiteral(cps);
  e.popIndent();
}

/** strconv.FormatFloat(f, 'g', -1, 64), as go-yaml prints floats. */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  const [mantissa = '', expText = '0'] = f.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(f);
}

/** How a JSON number comes out after JSON → go-yaml: integral values as integers, others as Go floats. */
function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return Object.is(n, -0) ? '0' : String(n);
  return formatGoFloat(n);
}

const isLetter = (ch: string): boolean => /\p{L}/u.test(ch);
const isDigit = (ch: string): boolean => /\p{Nd}/u.test(ch);

const isAsciiLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * goYamlKeyLess on two ASCII strings, on char codes (for ASCII, \p{L} and \p{Nd} are exactly these
 * ranges); undefined when either string has a non-ASCII character. Sorting keys is a large share of
 * rendering, and almost every key is ASCII.
 */
function asciiKeyLess(a: string, b: string): boolean | undefined {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ai = a.charCodeAt(i);
    const bi = b.charCodeAt(i);
    if (ai > 0x7f || bi > 0x7f) return undefined;
    if (ai === bi) continue;
    const al = isAsciiLetter(ai);
    const bl = isAsciiLetter(bi);
    if (al && bl) return ai < bi;
    if (al || bl) return bl;
    // Digit runs: fall back to the general code, which also handles what follows the difference.
    return undefined;
  }
  for (let i = n; i < a.length; i++) if (a.charCodeAt(i) > 0x7f) return undefined;
  for (let i = n; i < b.length; i++) if (b.charCodeAt(i) > 0x7f) return undefined;
  return a.length < b.length;
}

/** go-yaml v2's keyList.Less for string keys: letters before others, digit runs compared as numbers. */
export function goYamlKeyLess(a: string, b: string): boolean {
  const fast = asciiKeyLess(a, b);
  if (fast !== undefined) return fast;
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const ai = ar[i] as string;
    const bi = br[i] as string;
    if (ai === bi) continue;
    const al = isLetter(ai);
    const bl = isLetter(bi);
    if (al && bl) return (ai.codePointAt(0) as number) < (bi.codePointAt(0) as number);
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ai === '0' || bi === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j] as string); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let x = i;
    for (; x < ar.length && isDigit(ar[x] as string); x++)
      an = an * 10 + ((ar[x] as string).charCodeAt(0) - 48);
    let y = i;
    for (; y < br.length && isDigit(br[y] as string); y++)
      bn = bn * 10 + ((br[y] as string).charCodeAt(0) - 48);
    if (an !== bn) return an < bn;
    if (x !== y) return x < y;
    return (ai.codePointAt(0) as number) < (bi.codePointAt(0) as number);
  }
  return ar.length < br.length;
}

const compareKeys = (a: string, b: string): number =>
  goYamlKeyLess(a, b) ? -1 : goYamlKeyLess(b, a) ? 1 : 0;

const codePoints = (text: string): number[] => Array.from(text, (c) => c.codePointAt(0) as number);

function emitNode(e: Emitter, value: JsonValue, ctx: Context): void {
  if (value === null) {
    emitPlainWord(e, 'null');
    return;
  }
  if (typeof value === 'boolean' || typeof value === 'number') {
    emitPlainWord(e, typeof value === 'boolean' ? String(value) : formatNumber(value));
    return;
  }
  if (typeof value === 'string') {
    emitString(e, value, ctx);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      emitEmptyFlow(e, '[', ']');
      return;
    }
    e.increaseIndent(false, ctx.mapping && !e.indention);
    for (let i = 0; i < value.length; i++) {
      e.writeIndent();
      e.writeIndicator('-', true, false, true);
      emitChild(e, value, i, { sequence: true, mapping: false, simpleKey: false });
    }
    e.popIndent();
    return;
  }
  const keys = Object.keys(value).sort(compareKeys);
  if (keys.length === 0) {
    emitEmptyFlow(e, '{', '}');
    return;
  }
  e.increaseIndent(false, false);
  for (const key of keys) {
    e.writeIndent();
    // yaml_emitter_check_simple_key: single-line keys of at most 128 bytes.
    if (stringInfo(e, key).simpleKey) {
      emitString(e, key, { sequence: false, mapping: true, simpleKey: true });
      e.writeIndicator(':', false, false, false);
    } else {
      e.writeIndicator('?', true, false, true);
      emitString(e, key, { sequence: false, mapping: true, simpleKey: false });
      e.writeIndent();
      e.writeIndicator(':', true, false, true);
    }
    emitChild(e, value, key, { sequence: false, mapping: true, simpleKey: false });
  }
  e.popIndent();
}

/** Emits container[key]; an integer beyond 2^53 prints as the exact text its source held. */
function emitChild(
  e: Emitter,
  container: JsonObject | JsonValue[],
  key: string | number,
  ctx: Context,
): void {
  const value = (container as Record<string | number, JsonValue>)[key] as JsonValue;
  if (typeof value === 'number' && Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    const exact = exactIntText(container, key, value);
    if (exact !== undefined) {
      emitPlainWord(e, exact);
      return;
    }
  }
  emitNode(e, value, ctx);
}

function emitEmptyFlow(e: Emitter, open: string, close: string): void {
  e.writeIndicator(open, true, true, false);
  e.increaseIndent(true, false);
  e.popIndent();
  e.writeIndicator(close, false, false, false);
}

/** One document exactly as go-yaml v2's Marshal prints it. */
export function toYAMLDocument(value: JsonValue, infos = new Map<string, StringInfo>()): string {
  const e = new Emitter(infos);
  emitNode(e, value, { sequence: false, mapping: false, simpleKey: false });
  e.writeIndent();
  if (e.openEnded) {
    e.writeIndicator('...', true, false, false);
    e.writeIndent();
  }
  return e.out;
}

/** Renders resources byte-identically to `kustomize build`: each document as go-yaml prints it, joined by `---`. */
export function toYAML(resources: Resource[]): string {
  const infos = new Map<string, StringInfo>();
  return resources.map((r) => toYAMLDocument(r.object, infos)).join('---\n');
}
