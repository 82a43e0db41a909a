import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renderString, renderValue, TemplateError } from './template.ts';

const params = {
  cluster: { name: 'Edge-1', labels: { region: 'eu', 'topology.kubernetes.io/zone': 'eu-1a' }, replicas: 3 },
};

describe('KustomizationSet templates', () => {
  const cases: [string, string, unknown][] = [
    ['a path', 'agent-{{ .cluster.name }}', 'agent-Edge-1'],
    ['two paths', '{{ .cluster.labels.region }}/{{.cluster.name}}', 'eu/Edge-1'],
    [
      'a key with dots and slashes through index',
      '{{ index .cluster.labels "topology.kubernetes.io/zone" }}',
      'eu-1a',
    ],
    ['lower', '{{ .cluster.name | lower }}', 'edge-1'],
    ['slug', '{{ .cluster.name | slug }}', 'edge-1'],
    ['default for a missing key', '{{ .cluster.labels.tier | default "standard" }}', 'standard'],
    ['default keeps a present value', '{{ .cluster.labels.region | default "x" }}', 'eu'],
    ['a whole-string expression keeps its type', '{{ .cluster.replicas }}', 3],
    ['text without expressions', 'plain', 'plain'],
  ];
  for (const [what, template, want] of cases)
    test(what, () => assert.deepEqual(renderString(template, params), want));

  const errors: [string, string, RegExp][] = [
    ['a missing key', '{{ .cluster.labels.tier }}', /no parameter \.cluster\.labels\.tier/],
    ['a map where a value belongs', '{{ .cluster.labels }}', /is a map/],
    ['an unknown function', '{{ .cluster.name | exec "rm" }}', /unknown function exec/],
    ['anything but a path', '{{ printf "%s" .cluster.name }}', /expected a parameter path/],
  ];
  for (const [what, template, message] of errors)
    test(`refuses ${what}`, () =>
      assert.throws(
        () => renderString(template, params),
        (err: Error) => err instanceof TemplateError && message.test(err.message),
      ));

  test('renders every string of a nested value, keys included', () => {
    assert.deepEqual(
      renderValue({ a: ['{{ .cluster.name }}', true], '{{ .cluster.labels.region }}': 1 }, params),
      {
        a: ['Edge-1', true],
        eu: 1,
      },
    );
  });
});
