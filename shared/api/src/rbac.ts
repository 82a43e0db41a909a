import {
  KIND_REGISTRY,
  type KindRegistration,
  type KindRole,
  kindsWithRole,
  type OperatorName,
} from './kind-registry.ts';

/** One rule of a ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule), resource rules only. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** What an operator does to the kinds it reconciles: its objects, their status and finalizers. */
export const OWNED_VERBS = {
  objects: ['get', 'list', 'watch', 'patch', 'update'],
  status: ['get', 'patch', 'update'],
  finalizers: ['update'],
} as const;

/** Kinds an operator reads (or patches) without owning them, named by the role that brings them in. */
export interface KindReference {
  role: KindRole;
  verbs: readonly string[];
}

/** Each operator's references to other operators' kinds; its ClusterRole grants `verbs` on them. */
export const OPERATOR_REFERENCES: Readonly<Record<OperatorName, readonly KindReference[]>> = {
  source: [],
  // Reads its sources, like every other object, through its hand-written `*` read rule.
  kustomize: [],
  // Reads the objects Alerts watch and Receivers name; patches the latter to request a reconcile.
  notification: [{ role: 'notifiable', verbs: ['get', 'list', 'watch', 'patch'] }],
  // Reads the GitRepository it clones and pushes to.
  'image-automation': [{ role: 'imageUpdateSource', verbs: ['get', 'list', 'watch'] }],
};

/** `kinds` by API group, groups in the order they first appear. */
function byGroup(kinds: readonly KindRegistration[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const k of kinds) groups.set(k.group, [...(groups.get(k.group) ?? []), k.plural]);
  return groups;
}

/** The rules `operator`'s ClusterRole has on Mooring's kinds, derived from KIND_REGISTRY. */
export function kindRules(operator: OperatorName): PolicyRule[] {
  const registry: readonly KindRegistration[] = KIND_REGISTRY;
  const rules: PolicyRule[] = [];
  for (const [group, plurals] of byGroup(registry.filter((k) => k.operator === operator))) {
    rules.push(
      { apiGroups: [group], resources: plurals, verbs: [...OWNED_VERBS.objects] },
      { apiGroups: [group], resources: plurals.map((p) => `${p}/status`), verbs: [...OWNED_VERBS.status] },
      {
        apiGroups: [group],
        resources: plurals.map((p) => `${p}/finalizers`),
        verbs: [...OWNED_VERBS.finalizers],
      },
    );
  }
  for (const { role, verbs } of OPERATOR_REFERENCES[operator]) {
    const names: readonly string[] = kindsWithRole(role);
    const others = registry.filter((k) => names.includes(k.kind) && k.operator !== operator);
    for (const [group, plurals] of byGroup(others))
      rules.push({ apiGroups: [group], resources: plurals, verbs: [...verbs] });
  }
  return rules;
}

/** The lines that open and close the generated rules in config/operators/<operator>.yaml. */
export const KIND_RULES_BEGIN =
  '# BEGIN kind rules: written by `npm run gen-crds` from shared/api, do not edit';
export const KIND_RULES_END = '# END kind rules';

// Flow lists as in the hand-written rules; one longer than the files' 100 columns goes on its own line,
// and one longer than biome's line width (110) there is written one item a line, as biome formats it.
const WIDTH = 100;
const BIOME_WIDTH = 110;

function field(indent: string, name: string, values: readonly string[]): string {
  const items = values.map((v) => JSON.stringify(v));
  const list = `[${items.join(', ')}]`;
  const line = `${indent}${name}: ${list}`;
  if (line.length <= WIDTH) return line;
  const pad = ' '.repeat(indent.length);
  const own = `${pad}  ${list}`;
  if (own.length <= BIOME_WIDTH) return `${indent}${name}:\n${own}`;
  return [`${indent}${name}:`, `${pad}  [`, ...items.map((i) => `${pad}    ${i},`), `${pad}  ]`].join('\n');
}

/** `rules` as YAML list items under a `rules:` key at column 0, between the BEGIN and END lines. */
export function renderKindRules(rules: readonly PolicyRule[]): string {
  const lines = [`  ${KIND_RULES_BEGIN}`];
  for (const rule of rules) {
    lines.push(
      field('  - ', 'apiGroups', rule.apiGroups),
      field('    ', 'resources', rule.resources),
      field('    ', 'verbs', rule.verbs),
    );
  }
  lines.push(`  ${KIND_RULES_END}`);
  return `${lines.join('\n')}\n`;
}

/**
 * `manifest` (config/operators/<operator>.yaml) with the lines from BEGIN to END replaced by
 * `operator`'s kind rules; throws when the file has no such block.
 */
export function withKindRules(manifest: string, operator: OperatorName): string {
  const begin = manifest.indexOf(`  ${KIND_RULES_BEGIN}\n`);
  const endLine = `  ${KIND_RULES_END}\n`;
  const end = manifest.indexOf(endLine, begin);
  if (begin < 0 || end < 0)
    throw new Error(
      `the ${operator} manifest has no "${KIND_RULES_BEGIN}" … "${KIND_RULES_END}" block in its ClusterRole's rules`,
    );
  return (
    manifest.slice(0, begin) + renderKindRules(kindRules(operator)) + manifest.slice(end + endLine.length)
  );
}
