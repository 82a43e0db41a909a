// A quoted scalar whose continuation lines are not indented past its key:
//
//   description: 'APIVersion defines the versioned schema of this representation
//   of an object. Servers should convert recognized schemas…'
//
// YAML 1.2 and the yaml package end the scalar at the under-indented line ("Missing closing
// 'quote"). go-yaml, which kustomize and kubectl parse with, does not check a quoted scalar's
// indentation at all and folds the lines as usual. Old controller-gen output wrote CRDs this way,
// and some are still published (Flagger's, for one). So a stream the yaml package refuses for that
// reason alone is read again with those lines indented, which folding then strips: the same value
// go-yaml reads. Hand-written because the yaml package has no option for it.
import { type Document, parseAllDocuments } from 'yaml';

type Documents = Document.Parsed[];

/** At most this many re-reads: each indents every scalar the last read cut short. */
const MAX_ROUNDS = 8;

/** The quote an error reports a scalar is missing its closing one of, or undefined for other errors. */
function missingQuote(message: string): "'" | '"' | undefined {
  const m = /^Missing closing (['"])quote/.exec(message);
  return m ? (m[1] as "'" | '"') : undefined;
}

/**
 * Whether `line` holds the closing `quote` of a scalar it continues: in a single-quoted scalar `''`
 * is a quote, in a double-quoted one a backslash escapes the next character.
 */
function closesOn(line: string, quote: "'" | '"'): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === '"' && c === '\\') i++;
    else if (c === quote) {
      if (quote === "'" && line[i + 1] === "'") i++;
      else return true;
    }
  }
  return false;
}

/**
 * Indents the lines after `offset` (where a quoted scalar was cut short, the end of a line) until
 * the one holding its closing quote, so each is indented past the cut line's content.
 */
function indentAfter(lines: string[], lineStarts: number[], offset: number, quote: "'" | '"'): boolean {
  let at = lineStarts.findIndex((start, i) => offset >= start && offset < (lineStarts[i + 1] ?? Infinity));
  if (at < 0) return false;
  // The cut line's content starts after its indentation and any sequence dashes.
  const lead = /^( *)((?:- +)*)/.exec(lines[at] ?? '')?.[0].length ?? 0;
  const indent = ' '.repeat(lead + 1);
  let changed = false;
  for (at++; at < lines.length; at++) {
    const line = lines[at] ?? '';
    if (/^(---|\.\.\.)(\s|$)/.test(line)) return changed;
    const own = /^ */.exec(line)?.[0].length ?? 0;
    if (line.trim() !== '' && own <= lead) {
      lines[at] = indent + line.slice(own);
      changed = true;
    }
    if (closesOn(lines[at] ?? '', quote)) return changed;
  }
  return changed;
}

/**
 * The stream's documents, as `parseAllDocuments` reads `text`, unless they fail only on quoted
 * scalars cut short by their continuation lines' indentation: then the documents of the text with
 * those lines indented, and that text (offsets in the documents refer to it; its lines are the same
 * lines). The first read is returned as it is whenever the indented text does not read cleanly.
 * `options` is called once per read (a LineCounter counts one read), and the options of the read
 * returned are returned with it.
 */
export function parseIndentingQuotedContinuations<O extends Parameters<typeof parseAllDocuments>[1]>(
  text: string,
  options: () => O,
): { docs: Documents; text: string; options: O } {
  const firstOptions = options();
  const first = parseAllDocuments(text, firstOptions) as Documents;
  const cutShort = (docs: Documents) =>
    docs.flatMap((d) =>
      d.errors.flatMap((e) => {
        const quote = missingQuote(e.message);
        return quote ? [{ offset: e.pos[0], quote }] : [];
      }),
    );
  let cuts = cutShort(first);
  if (cuts.length === 0) return { docs: first, text, options: firstOptions };
  let current = text;
  for (let round = 0; round < MAX_ROUNDS && cuts.length > 0; round++) {
    const lines = current.split('\n');
    const lineStarts: number[] = [];
    let start = 0;
    for (const line of lines) {
      lineStarts.push(start);
      start += line.length + 1;
    }
    let changed = false;
    // Offsets are looked up in the line starts of `current`, which indenting lines does not move.
    for (const cut of cuts) changed = indentAfter(lines, lineStarts, cut.offset, cut.quote) || changed;
    if (!changed) break;
    current = lines.join('\n');
    const again = options();
    const docs = parseAllDocuments(current, again) as Documents;
    if (docs.every((d) => d.errors.length === 0)) return { docs, text: current, options: again };
    cuts = cutShort(docs);
  }
  return { docs: first, text, options: firstOptions };
}
