import type { JSONSchemaProps } from './crd.ts';

// Kubernetes' structural-schema rules (apiextensions.k8s.io/v1), plus Mooring's own: no logical
// junctors at all, since TypeBox unions would put types inside them.
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const FORBIDDEN = [
  '$ref',
  '$id',
  '$schema',
  '$defs',
  'id',
  'definitions',
  'dependencies',
  'patternProperties',
  'additionalItems',
  'const',
  'readOnly',
  'writeOnly',
  'xml',
  'deprecated',
  'discriminator',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
];

/** Reasons `root` (a CRD's openAPIV3Schema) is not a structural schema; empty when it is. */
export function structuralErrors(root: JSONSchemaProps): string[] {
  const errors: string[] = [];
  const metadata = (root.properties as Record<string, JSONSchemaProps> | undefined)?.metadata;
  if (metadata && Object.keys(metadata).some((k) => k !== 'type')) {
    errors.push('.metadata: may only say type: object');
  }
  visit(root, '', errors);
  return errors;
}

function visit(node: JSONSchemaProps, path: string, errors: string[]): void {
  const at = path || '<root>';
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  for (const key of FORBIDDEN) if (key in node) errors.push(`${at}: ${key} is not allowed`);

  const type = node.type;
  if (type === undefined) {
    if (!preserve && !intOrString) errors.push(`${at}: type is missing`);
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    errors.push(`${at}: type ${JSON.stringify(type)} is not a single known type`);
  }

  const properties = node.properties as Record<string, JSONSchemaProps> | undefined;
  const additional = node.additionalProperties;
  if (properties !== undefined && type !== 'object') errors.push(`${at}: properties need type: object`);
  if (additional !== undefined) {
    if (type !== 'object') errors.push(`${at}: additionalProperties needs type: object`);
    if (additional === false) errors.push(`${at}: additionalProperties: false is not allowed`);
    if (properties && Object.keys(properties).length > 0) {
      errors.push(`${at}: properties and additionalProperties are mutually exclusive`);
    }
    if (typeof additional === 'object' && additional !== null) {
      visit(additional as JSONSchemaProps, `${path}[*]`, errors);
    }
  }
  for (const [name, child] of Object.entries(properties ?? {})) visit(child, `${path}.${name}`, errors);

  const required = node.required as string[] | undefined;
  for (const name of required ?? []) {
    if (!properties || !(name in properties)) errors.push(`${at}: required field ${name} is not a property`);
  }

  if (type === 'array') {
    const items = node.items;
    if (items === undefined || Array.isArray(items) || typeof items !== 'object') {
      errors.push(`${at}: an array needs one items schema`);
    } else {
      visit(items as JSONSchemaProps, `${path}[*]`, errors);
      checkListType(node, items as JSONSchemaProps, at, errors);
    }
  } else if (node.items !== undefined) {
    errors.push(`${at}: items needs type: array`);
  }
  if (node.uniqueItems === true) errors.push(`${at}: uniqueItems: true is not allowed`);

  if (Array.isArray(node.enum) && typeof type === 'string') {
    for (const value of node.enum) {
      if (!matchesType(value, type))
        errors.push(`${at}: enum value ${JSON.stringify(value)} is not a ${type}`);
    }
  }
  const rules = node['x-kubernetes-validations'];
  if (rules !== undefined) {
    const ok =
      Array.isArray(rules) &&
      rules.every(
        (r) => typeof r === 'object' && r !== null && typeof (r as { rule?: unknown }).rule === 'string',
      );
    if (!ok) errors.push(`${at}: x-kubernetes-validations must be a list of {rule, message}`);
  }
}

function checkListType(node: JSONSchemaProps, items: JSONSchemaProps, at: string, errors: string[]): void {
  if (node['x-kubernetes-list-type'] !== 'map') return;
  const keys = node['x-kubernetes-list-map-keys'];
  const itemProps = (items.properties ?? {}) as Record<string, JSONSchemaProps>;
  const itemRequired = (items.required ?? []) as string[];
  if (!Array.isArray(keys) || keys.length === 0) {
    errors.push(`${at}: x-kubernetes-list-type: map needs x-kubernetes-list-map-keys`);
    return;
  }
  for (const key of keys as string[]) {
    const prop = itemProps[key];
    if (!prop || !['string', 'integer', 'number', 'boolean'].includes(prop.type as string)) {
      errors.push(`${at}: list map key ${key} must be a scalar property of the items`);
    } else if (!itemRequired.includes(key) && prop.default === undefined) {
      errors.push(`${at}: list map key ${key} must be required or defaulted`);
    }
  }
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return typeof value === 'object' && value !== null;
  }
}
