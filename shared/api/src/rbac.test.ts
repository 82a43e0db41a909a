import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  IMAGE_UPDATE_SOURCE_KINDS,
  kindRegistration,
  kindsOfOperator,
  NOTIFIABLE_KINDS,
  OPERATOR_NAMES,
  type OperatorName,
} from './kind-registry.ts';
import { kindRules, type PolicyRule, renderKindRules, withKindRules } from './rbac.ts';

const OPERATORS_DIR = fileURLToPath(new URL('../../../config/operators/', import.meta.url));

async function clusterRoleRules(operator: OperatorName): Promise<PolicyRule[]> {
  const text = await readFile(`${OPERATORS_DIR}${operator}.yaml`, 'utf8');
  const role = parseAllDocuments(text)
    .map((d) => d.toJS() as { kind?: string; rules?: PolicyRule[] })
    .find((o) => o.kind === 'ClusterRole');
  assert.ok(role?.rules, `config/operators/${operator}.yaml has a ClusterRole with rules`);
  return role.rules;
}

/** `group/resource` → verbs granted by `rules` on Mooring's groups. */
function grants(rules: readonly PolicyRule[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of rules)
    for (const g of r.apiGroups.filter((g) => g.endsWith('.mooring.dev')))
      for (const res of r.resources) {
        const key = `${g}/${res}`;
        out.set(key, new Set([...(out.get(key) ?? []), ...r.verbs]));
      }
  return out;
}

test("each operator's ClusterRole names Mooring's kinds only as the registry derives", async () => {
  for (const operator of OPERATOR_NAMES) {
    const mooring = (await clusterRoleRules(operator)).filter((r) =>
      r.apiGroups?.some((g) => g.endsWith('.mooring.dev')),
    );
    assert.deepEqual(mooring, kindRules(operator), `config/operators/${operator}.yaml`);
  }
});

test('an operator owns its kinds, status and finalizers, and reads what its references need', () => {
  for (const operator of OPERATOR_NAMES) {
    const g = grants(kindRules(operator));
    for (const kind of kindsOfOperator(operator)) {
      const { group, plural } = kindRegistration(kind);
      assert.deepEqual([...(g.get(`${group}/${plural}`) ?? [])].sort(), [
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]);
      assert.deepEqual([...(g.get(`${group}/${plural}/status`) ?? [])].sort(), ['get', 'patch', 'update']);
      assert.deepEqual([...(g.get(`${group}/${plural}/finalizers`) ?? [])], ['update']);
    }
  }
  const notification = grants(kindRules('notification'));
  for (const kind of NOTIFIABLE_KINDS) {
    const { group, plural } = kindRegistration(kind);
    assert.deepEqual([...(notification.get(`${group}/${plural}`) ?? [])].sort(), [
      'get',
      'list',
      'patch',
      'watch',
    ]);
  }
  const image = grants(kindRules('image-automation'));
  for (const kind of IMAGE_UPDATE_SOURCE_KINDS) {
    const { group, plural } = kindRegistration(kind);
    assert.deepEqual([...(image.get(`${group}/${plural}`) ?? [])].sort(), ['get', 'list', 'watch']);
  }
  // Nothing beyond that: the source operator touches only its own kinds.
  assert.deepEqual(
    [...grants(kindRules('source')).keys()].sort(),
    kindsOfOperator('source')
      .flatMap((k) => {
        const { group, plural } = kindRegistration(k);
        return [`${group}/${plural}`, `${group}/${plural}/finalizers`, `${group}/${plural}/status`];
      })
      .sort(),
  );
});

test('the rendered rules read back as the rules, and replace only the marked block', () => {
  const rules = kindRules('image-automation');
  const rendered = renderKindRules(rules);
  assert.deepEqual(parseAllDocuments(`rules:\n${rendered}`)[0]!.toJS().rules, rules);
  // Flow lists wider than 100 columns go on their own line, as in the hand-written rules.
  assert.match(rendered, /\n {4}resources:\n {6}\["imagerepositories\/finalizers", /);
  for (const line of rendered.split('\n')) assert.ok(line.length <= 100 || line.startsWith('      ['), line);
  const manifest = `kind: ClusterRole\nrules:\n  - apiGroups: ["*"]\n${renderKindRules([])}  - apiGroups: [""]\n`;
  const updated = withKindRules(manifest, 'image-automation');
  assert.equal(updated, manifest.replace(renderKindRules([]), rendered));
  assert.equal(withKindRules(updated, 'image-automation'), updated);
  assert.throws(() => withKindRules('kind: ClusterRole\nrules: []\n', 'source'), /no "# BEGIN kind rules/);
});
