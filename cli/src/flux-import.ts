import { KINDS, type KindDefinition } from '@mooring/api';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type Document, isMap, isScalar, parseAllDocuments, type Scalar, visit, type YAMLMap } from 'yaml';

/**
 * What one manifest needed, or could not get, on its way to Mooring. An `error` means a cluster
 * with only Mooring would refuse the output as it is; a `warning` that Mooring ignores a field.
 */
export interface ImportNote {
  object: string;
  message: string;
  severity: 'error' | 'warning';
}

// Any Flux API version: the toolkit's groups and the extensions (source.extensions.fluxcd.io).
const FLUX_API = /^([a-z0-9.-]+)\.fluxcd\.io\/(v[0-9a-z]+)$/;
// Flux groups whose kinds Mooring serves under <name>.mooring.dev, as far as Mooring has them.
const MOORING_GROUPS: Record<string, string> = {
  'source.toolkit': 'source.mooring.dev',
  'kustomize.toolkit': 'kustomize.mooring.dev',
  'notification.toolkit': 'notification.mooring.dev',
  'image.toolkit': 'image.mooring.dev',
  'helm.toolkit': 'helm.mooring.dev',
};
// Label and annotation prefixes Flux uses, and Mooring's names for them.
const PREFIXES: [RegExp, string][] = [
  [/^kustomize\.toolkit\.fluxcd\.io\//, 'kustomize.mooring.dev/'],
  [/^helm\.toolkit\.fluxcd\.io\//, 'helm.mooring.dev/'],
  [/^reconcile\.fluxcd\.io\//, 'reconcile.mooring.dev/'],
  [/^event\.toolkit\.fluxcd\.io\//, 'event.mooring.dev/'],
  [/^sharding\.fluxcd\.io\//, 'sharding.mooring.dev/'],
  // Flux's tenant label, which `mooring create tenant` writes as mooring.dev/tenant.
  [/^toolkit\.fluxcd\.io\//, 'mooring.dev/'],
];

/** The Mooring kind a Flux `apiVersion` and `kind` become, or undefined when Mooring has none. */
export function mooringKindOf(apiVersion: unknown, kind: unknown): KindDefinition | undefined {
  const m = typeof apiVersion === 'string' ? FLUX_API.exec(apiVersion) : null;
  const group = m ? MOORING_GROUPS[m[1]!] : undefined;
  return group ? KINDS.find((k) => k.group === group && k.kind === kind) : undefined;
}

/** Label and annotation keys and values; API versions are rewritten only with their kind. */
function rewriteScalar(value: string): string {
  if (FLUX_API.test(value)) return value;
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

/** `/sourceRef/kind` as `spec.sourceRef.kind`, `/dependsOn/0/name` as `spec.dependsOn[0].name`. */
function dotted(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), 'spec');
}

/** What the API server would refuse in `spec`, by the schema its CRD is generated from. */
export function schemaViolations(def: KindDefinition, spec: unknown): string[] {
  const out: string[] = [];
  for (const error of Value.Errors(def.spec, spec)) {
    const path = dotted(error.path);
    const allowed = (error.schema as { enum?: string[] }).enum;
    if (allowed && path === 'spec.sourceRef.kind' && error.value === 'ExternalArtifact')
      out.push(
        `${path} ExternalArtifact is not a source Mooring has (it takes ${allowed.join(' or ')}): point sourceRef at the GitRepository the artifact was cut from and set path to its folder there`,
      );
    else if (allowed)
      out.push(
        `${path} ${JSON.stringify(error.value)} is not one Mooring has (it takes ${allowed.join(' or ')})`,
      );
    else if (error.value === undefined) out.push(`${path} is required`);
    else out.push(`${path}: ${error.message}`);
  }
  // A nested error also fails every parent; keep only the most precise sentence per path.
  return out.filter((line, i) => out.findIndex((other) => other.split(' ')[0] === line.split(' ')[0]) === i);
}

function describe(doc: Document): string {
  const kind = String(doc.get('kind') ?? '?');
  const ns = doc.getIn(['metadata', 'namespace']);
  const name = doc.getIn(['metadata', 'name']);
  return `${kind} ${ns ? `${ns}/` : ''}${name ?? '?'}`;
}

/** A kustomize configuration (kustomization.yaml), which is read from the source, not applied. */
function isKustomizeConfig(doc: Document): boolean {
  const apiVersion = doc.get('apiVersion');
  if (typeof apiVersion === 'string') return apiVersion.startsWith('kustomize.config.k8s.io/');
  // Without an apiVersion: kustomize's own kinds, or no kind and kustomize's fields.
  const kind = doc.get('kind');
  if (kind === 'Kustomization' || kind === 'Component') return true;
  return kind === undefined && ['resources', 'patches', 'components', 'bases'].some((k) => doc.has(k));
}

/**
 * Rewrites Flux manifests to Mooring's groups, labels and annotations, keeping comments and layout,
 * and notes every object or field Mooring cannot take. An object of a kind Mooring does not have
 * (ArtifactGenerator, Bucket) is kept exactly as it is, with an error note:
 * no API version is made up for it. A kustomize configuration is left out, with a warning.
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
    // Every document is printed after a `---` of its own; a comment above the file's first `---`
    // then stays with its document instead of becoming an empty one.
    if (doc.directives) doc.directives.docStart = null;
    if (isKustomizeConfig(doc)) {
      notes.push({
        object: 'kustomize configuration',
        message: 'not an object to apply: left out (a Kustomization reads it from its source as it is)',
        severity: 'warning',
      });
      continue;
    }
    const apiVersion = doc.get('apiVersion');
    const kind = doc.get('kind');
    const fromFlux = typeof apiVersion === 'string' && FLUX_API.test(apiVersion);
    const def = mooringKindOf(apiVersion, kind);
    if (fromFlux && !def) {
      notes.push({
        object,
        message: `${kind} (${apiVersion}) has no Mooring equivalent: kept as it is, which a cluster without Flux refuses`,
        severity: 'error',
      });
      out.push(String(doc));
      continue;
    }
    visit(doc, {
      Map(_key, node: YAMLMap) {
        // An object or a reference to one: its API version moves only when Mooring has the kind.
        const version = node.get('apiVersion', true) as Scalar | undefined;
        if (!isScalar(version) || typeof version.value !== 'string' || !FLUX_API.test(version.value)) return;
        const target = mooringKindOf(version.value, node.get('kind'));
        if (target) version.value = `${target.group}/${target.version}`;
      },
      Scalar(_key, node) {
        if (typeof node.value === 'string') node.value = rewriteScalar(node.value);
      },
    });
    if (def) {
      const spec = doc.get('spec');
      const value = isMap(spec) ? spec.toJSON() : (spec ?? {});
      const errors = schemaViolations(def, value);
      for (const message of errors)
        notes.push({ object, message: `the API server refuses it: ${message}`, severity: 'error' });
      for (const field of unknownFields(def.spec, value, 'spec'))
        notes.push({
          object,
          message: `${field} is not supported by Mooring; the API server drops it`,
          severity: 'warning',
        });
    }
    out.push(String(doc));
  }
  return { yaml: out.map((d) => `---\n${d}`).join(''), notes };
}
