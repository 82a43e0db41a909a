import { isMap, isScalar, parse, parseAllDocuments, type Scalar, visit } from 'yaml';

/** The image a policy selected. */
export interface PolicyImage {
  name: string;
  tag: string;
  digest?: string;
}

/** Which part of the image a marker asks for. */
export type SetterField = 'full' | 'name' | 'tag' | 'digest';

/** The object (YAML document) a change sits in, when it has kind and metadata.name. */
export interface ObjectId {
  kind: string;
  name: string;
  namespace?: string;
}

/** One value rewritten by a marker. */
export interface SetterChange {
  /** The marker's policy reference, e.g. `apps:podinfo:tag`. */
  setter: string;
  oldValue: string;
  newValue: string;
  object?: ObjectId;
}

/** The text after the edits and what changed; `text` is the input itself when nothing did. */
export interface SetterResult {
  text: string;
  changes: SetterChange[];
}

/** The marker's text, found quickly before any parsing. */
export const MARKER = '$imagepolicy';

/** Parses a marker comment's body (`{"$imagepolicy": "ns:name[:field]"}`); undefined when it is not one. */
export function parseMarker(
  comment: string,
): { key: string; field: SetterField; setter: string } | undefined {
  const text = comment.trim();
  if (!text.startsWith('{') || !text.includes(MARKER)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const setter = (doc as Record<string, unknown> | null)?.[MARKER];
  if (typeof setter !== 'string') return undefined;
  const parts = setter.split(':');
  if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1]) return undefined;
  const suffix = parts[2];
  if (suffix !== undefined && suffix !== 'tag' && suffix !== 'name' && suffix !== 'digest') return undefined;
  return { key: `${parts[0]}:${parts[1]}`, field: suffix ?? 'full', setter };
}

/** The value a marker writes: `name:tag` (with `@digest` when known), or one part of it. */
export function valueFor(image: PolicyImage, field: SetterField): string | undefined {
  switch (field) {
    case 'name':
      return image.name;
    case 'tag':
      return image.tag;
    case 'digest':
      return image.digest || undefined;
    default:
      return `${image.name}:${image.tag}${image.digest ? `@${image.digest}` : ''}`;
  }
}

/**
 * A value that reads back as the same string unquoted, under YAML 1.2 and the 1.1 rules Kubernetes
 * still applies (`2` or `0755` would turn into numbers, `yes` into a boolean).
 */
function plainSafe(value: string): boolean {
  if (!/^[A-Za-z0-9_./@-][A-Za-z0-9_./:@+-]*$/.test(value) || value.endsWith(':')) return false;
  try {
    return parse(value) === value && parse(value, { version: '1.1' }) === value;
  } catch {
    return false;
  }
}

/** A value written back in the scalar's own quoting, so the line keeps its style. */
function render(node: Scalar, value: string): string | undefined {
  switch (node.type) {
    case 'QUOTE_DOUBLE':
      return JSON.stringify(value);
    case 'QUOTE_SINGLE':
      return `'${value.replaceAll("'", "''")}'`;
    case 'PLAIN':
      // Image references are plain-safe; anything that would change meaning unquoted gets double quotes.
      return plainSafe(value) ? value : JSON.stringify(value);
    default:
      // Block scalars (| and >) never hold an image reference; leave them alone.
      return undefined;
  }
}

function objectOf(doc: { contents: unknown }): ObjectId | undefined {
  const root = doc.contents;
  if (!isMap(root)) return undefined;
  const kind = root.get('kind');
  const meta = root.get('metadata');
  if (typeof kind !== 'string' || !isMap(meta)) return undefined;
  const name = meta.get('name');
  const namespace = meta.get('namespace');
  if (typeof name !== 'string') return undefined;
  return typeof namespace === 'string' ? { kind, name, namespace } : { kind, name };
}

/**
 * Rewrites every YAML scalar marked with `# {"$imagepolicy": "<ns>:<name>[:tag|:name|:digest]"}`
 * on its own line to the image `images` holds for `<ns>:<name>`. Edits splice the original text at
 * the scalar's range, so comments, quoting, indentation, key order and other documents stay byte
 * for byte. Markers naming an unknown policy are left as they are. Throws when the YAML is invalid.
 */
export function applySetters(source: string, images: ReadonlyMap<string, PolicyImage>): SetterResult {
  if (!source.includes(MARKER)) return { text: source, changes: [] };
  const edits: { start: number; end: number; text: string }[] = [];
  const changes: SetterChange[] = [];
  for (const doc of parseAllDocuments(source)) {
    if (!('errors' in doc)) continue; // an empty stream
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
    let object: ObjectId | undefined | null = null;
    visit(doc, {
      Scalar(_key, node) {
        if (!node.comment || !node.range || !isScalar(node)) return;
        const [start, end, nodeEnd] = node.range;
        // Only a comment on the value's own line is a marker, never one on the next line.
        if (!/^[ \t]+#/.test(source.slice(end, nodeEnd))) return;
        const marker = parseMarker(node.comment.split('\n')[0] ?? '');
        if (!marker) return;
        const image = images.get(marker.key);
        if (!image) return;
        const value = valueFor(image, marker.field);
        const old = typeof node.value === 'string' ? node.value : String(node.value);
        if (value === undefined || value === old) return;
        const text = render(node, value);
        if (text === undefined) return;
        edits.push({ start, end, text });
        if (object === null) object = objectOf(doc);
        changes.push({
          setter: marker.setter,
          oldValue: old,
          newValue: value,
          ...(object ? { object } : {}),
        });
      },
    });
  }
  if (edits.length === 0) return { text: source, changes: [] };
  let text = source;
  for (const e of edits.sort((a, b) => b.start - a.start)) {
    text = text.slice(0, e.start) + e.text + text.slice(e.end);
  }
  return { text, changes };
}
