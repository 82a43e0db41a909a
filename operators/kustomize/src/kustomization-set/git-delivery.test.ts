// What a set in delivery mode git writes, over plain data: where each member's file goes, and
// that the same input writes the same bytes (a pass that changes nothing commits nothing).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { type FleetSet, fleetPaths, memberYaml } from './git-delivery.ts';
import type { RenderedMember } from './render-members.ts';

const set: FleetSet = { namespace: 'fleet', name: 'agents', delivery: { mode: 'git' } };

const rendered = (cluster: string, spec: Record<string, unknown>): RenderedMember => ({
  name: cluster,
  kustomization: `agent-${cluster}`,
  labels: { region: 'eu' },
  annotations: {},
  spec,
  revision: 'r1',
  element: { params: { cluster: { name: cluster } }, labels: {}, clusterSecret: `cluster-${cluster}` },
});

describe('git delivery', () => {
  test("each member's file is <path>/<set name>.yaml, clusters/<name> by default", () => {
    const paths = fleetPaths(set, [rendered('a', {}), rendered('b', {})]);
    assert.deepEqual(Object.fromEntries(paths), {
      'agent-a': 'clusters/a/agents.yaml',
      'agent-b': 'clusters/b/agents.yaml',
    });
    const custom = { ...set, delivery: { mode: 'git' as const, path: 'fleet/{{ .cluster.name }}/' } };
    assert.equal(fleetPaths(custom, [rendered('a', {})]).get('agent-a'), 'fleet/a/agents.yaml');
  });

  test('a path that leaves the repository is refused', () => {
    for (const path of ['../{{ .cluster.name }}', '/etc/{{ .cluster.name }}', '.'])
      assert.throws(
        () => fleetPaths({ ...set, delivery: { mode: 'git', path } }, [rendered('a', {})]),
        /inside the repository/,
        path,
      );
  });

  test('the file holds the member without spec.kubeConfig, the same bytes for the same input', () => {
    const spec = { path: 'apps', kubeConfig: { secretRef: { name: 'cluster-a' } }, interval: '1m' };
    const text = memberYaml(set, rendered('a', spec), 'kustomize.mooring.dev/v1', 'Kustomization');
    const reordered = { interval: '1m', kubeConfig: spec.kubeConfig, path: 'apps' };
    assert.equal(
      memberYaml(set, rendered('a', reordered), 'kustomize.mooring.dev/v1', 'Kustomization'),
      text,
    );
    const obj = parse(text);
    assert.deepEqual(obj.spec, { interval: '1m', path: 'apps' });
    assert.equal(obj.metadata.namespace, 'fleet');
    assert.equal(obj.metadata.labels['kustomize.mooring.dev/set-name'], 'agents');
    assert.equal(obj.metadata.annotations['kustomize.mooring.dev/set'], 'fleet/agents');
    assert.equal(obj.metadata.annotations['kustomize.mooring.dev/set-revision'], 'r1');
  });
});
