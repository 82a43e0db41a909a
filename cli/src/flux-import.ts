import { KINDS } from '@mooring/api';
import type { TSchema } from '@sinclair/typebox';
import { type Document, isMap, parseAllDocuments, visit } from 'yaml';

/** What one Flux manifest needed, or could not get, on its way to Mooring. */
export interface ImportNote {
  object: string;
  message: string;
}

const FLUX_GROUP = /^(source|kustomize|notification|image)\.toolkit\.fluxcd\.io\/v[0-9a-z]+$/;
const ANY_FLUX_GROUP = /^([a-z-]+)\.toolkit\.fluxcd\.io\/v[0-9a-z]+$/;
// Label and annotation prefixes Flux uses, and Mooring's names for them.
const PREFIXES: [RegExp, string][] = [
  [/^kustomize\.toolkit\.fluxcd\.io\//, 'kustomize.mooring.dev/'],
  [/^reconcile\.fluxcd\.io\//, 'reconcile.mooring.dev/'],
  [/^event\.toolkit\.fluxcd\.io\//, 'event.mooring.dev/'],
  [/^sharding\.fluxcd\.io\//, 'sharding.mooring.dev/'],
  // Flux's tenant label, which `mooring create tenant` writes as mooring.dev/tenant.
  [/^toolkit\.fluxcd\.io\//, 'mooring.dev/'],
];

function rewriteScalar(value: string): string {
  const group = FLUX_GROUP.exec(value);
  if (group) return `${group[1]}.mooring.dev/v1`;
  for (const [from, to] of PREFIXES) if (from.test(value)) return value.replace(from, to);
  return value;
}

/** Fields in `value` that the schema does not declare, as dotted paths. */
export function unknownFields(schema: TSchema, value: unknown, path: string): string[] {
  if (Array.isArray(value)) {
    const items = schema.items as TSchema | undefined;
    return items ? value.flatMap((v, i) => unknownFields(items, v, `${path}[${i}]`)) : [];
  }
  if (!value || typeof value !== 'object') return [];
  const props = schema.properties as Record<string, TSchema> | undefined;
  const extra = schema.additionalProperties;
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const child = props?.[k] ?? (typeof extra === 'object' ? (extra as TSchema) : undefined);
    if (child) out.push(...unknownFields(child, v, `${path}.${k}`));
    else if (props && extra !== true && !schema['x-kubernetes-preserve-unknown-fields'])
      out.push(`${path}.${k}`);
  }
  return out;
}

function describe(doc: Document): string {
  const kind = String(doc.get('kind') ?? '?');
  const ns = doc.getIn(['metadata', 'namespace']);
  const name = doc.getIn(['metadata', 'name']);
  return `${kind} ${ns ? `${ns}/` : ''}${name ?? '?'}`;
}

/**
 * Rewrites Flux manifests to Mooring's groups, labels and annotations, keeping comments and layout,
 * and notes every object or field Mooring cannot take.
 */
export function importFlux(text: string): { yaml: string; notes: ImportNote[] } {
  const notes: ImportNote[] = [];
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return { yaml: text, notes };
  const out: string[] = [];
  for (const doc of docs) {
    if (doc.errors.length) throw new Error(`the YAML does not parse: ${doc.errors[0]!.message}`);
    if (doc.contents === null) continue;
    const object = describe(doc);
    const apiVersion = doc.get('apiVersion');
    const fluxKind = typeof apiVersion === 'string' && ANY_FLUX_GROUP.test(apiVersion);
    if (fluxKind && !FLUX_GROUP.test(apiVersion)) {
      notes.push({ object, message: `${apiVersion} has no Mooring equivalent; left unchanged` });
      out.push(String(doc));
      continue;
    }
    visit(doc, {
      Scalar(_key, node) {
        if (typeof node.value === 'string') node.value = rewriteScalar(node.value);
      },
    });
    if (fluxKind) {
      const kind = String(doc.get('kind'));
      const def = KINDS.find((k) => k.kind === kind);
      if (!def) notes.push({ object, message: `kind ${kind} has no Mooring equivalent; left as ${kind}` });
      else {
        const spec = doc.get('spec');
        if (isMap(spec) || spec === undefined) {
          for (const field of unknownFields(
            def.spec,
            (spec as { toJSON?: () => unknown })?.toJSON?.() ?? {},
            'spec',
          ))
            notes.push({
              object,
              message: `${field} is not supported by Mooring; the operator will reject or ignore it`,
            });
        }
      }
    }
    out.push(String(doc));
  }
  return { yaml: out.map((d) => (d.startsWith('---') ? d : `---\n${d}`)).join(''), notes };
}
