import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CaseOptions, caseNeeds, firstDifference } from './krusty-cases.ts';

const builtinsOnly: CaseOptions = {
  reorder: 'none',
  addManagedbyLabel: false,
  loadRestrictions: 'LoadRestrictionsRootOnly',
  plugins: {
    pluginRestrictions: 'PluginRestrictionsBuiltinsOnly',
    bpLoadingOptions: 'BploUseStaticallyLinked',
    fnExec: false,
    fnNetwork: false,
    fnMounts: 0,
    helmEnabled: false,
  },
};
const pluginsEnabled: CaseOptions = {
  ...builtinsOnly,
  plugins: { ...builtinsOnly.plugins, pluginRestrictions: 'PluginRestrictionsNone', helmEnabled: true },
};

test('caseNeeds: a builtin transformer config needs nothing, even with plugins enabled', () => {
  const files = ['kustomization.yaml', 'prefix.yaml'];
  const texts = [
    'transformers:\n- prefix.yaml\n',
    'apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nprefix: a-\n',
  ];
  assert.deepEqual(caseNeeds(pluginsEnabled, '.', files, texts), []);
});

test('caseNeeds: a non-builtin config, inline or in a directory, needs plugins', () => {
  const inline =
    'transformers:\n- |-\n  apiVersion: someteam.example.com/v1\n  kind: Sed\n  metadata:\n    name: s\n';
  assert.deepEqual(caseNeeds(pluginsEnabled, '.', ['kustomization.yaml'], [inline]), ['plugins']);
  const files = ['kustomization.yaml', 'gens/kustomization.yaml', 'gens/gen.yaml'];
  const texts = [
    'generators:\n- gens\n',
    'resources:\n- gen.yaml\n',
    'apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n',
  ];
  assert.deepEqual(caseNeeds(pluginsEnabled, '.', files, texts), ['plugins']);
});

test('caseNeeds: KRM function annotations, remote resources and helmCharts', () => {
  const fn =
    'apiVersion: v1\nkind: X\nmetadata:\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {}\n';
  assert.deepEqual(caseNeeds(builtinsOnly, '.', ['fn.yaml'], [fn]), ['plugins']);
  const remote =
    'resources:\n- https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6\n';
  assert.deepEqual(caseNeeds(builtinsOnly, '.', ['kustomization.yaml'], [remote]), ['remote']);
  assert.deepEqual(caseNeeds(builtinsOnly, 'github.com/org/repo', [], []), ['remote']);
  const helm = 'helmCharts:\n- name: minecraft\n  repo: https://example.invalid\n';
  assert.deepEqual(caseNeeds(builtinsOnly, '.', ['kustomization.yaml'], [helm]), ['helm']);
  // Helm enabled by the plugin options alone needs nothing.
  assert.deepEqual(caseNeeds(pluginsEnabled, '.', ['kustomization.yaml'], ['resources: []\n']), []);
});

test('firstDifference names the first differing line', () => {
  assert.equal(firstDifference('a\nb\nc\n', 'a\nx\nc\n'), 'line 2: want "b" got "x"');
  assert.equal(firstDifference('a\n', 'a\nb\n'), 'line 2: want "" got "b"');
  assert.equal(firstDifference('a\nb', 'a'), 'line 2: want "b" got (end)');
});
