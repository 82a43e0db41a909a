import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memberHeadline, memberObjectLine } from './fleet-tree.ts';

test('a pushed member is the Kustomization on this cluster, whose inventory the tree lists', () => {
  const m = { name: 'eu-1', kustomization: 'agent-eu-1', state: 'Current', revision: 'abc' };
  assert.equal(memberHeadline(m), 'eu-1 (Current abc)');
  assert.deepEqual(memberObjectLine(m, 'fleet'), {
    line: 'Kustomization/fleet/agent-eu-1',
    onThisCluster: true,
  });
});

test('a member delivered through Git names its file and commit, not an object on this cluster', () => {
  const m = {
    name: 'edge',
    kustomization: 'agent-edge',
    state: 'Committed',
    message: 'committed to main at 0123456789abcdef; no kubeconfig to read its Ready',
    path: 'clusters/edge/agents.yaml',
    commit: '0123456789abcdef0123',
  };
  assert.equal(
    memberHeadline(m),
    'edge (Committed: committed to main at 0123456789abcdef; no kubeconfig to read its Ready)',
  );
  assert.deepEqual(memberObjectLine(m, 'fleet'), {
    line: "Kustomization/fleet/agent-edge in Git: clusters/edge/agents.yaml at 0123456789ab, applied by the cluster's agent",
    onThisCluster: false,
  });
  assert.match(memberObjectLine({ ...m, commit: undefined }, 'fleet').line, /not committed yet/);
});

test('a HelmRelease member shows its release and chart', () => {
  const m = {
    name: 'a',
    kustomization: 'agent-a',
    kind: 'HelmRelease' as const,
    state: 'Current',
    releaseVersion: 3,
    appliedRevision: '1.2.0',
  };
  assert.equal(memberObjectLine(m, 'ns').line, 'HelmRelease/ns/agent-a (release v3, chart 1.2.0)');
});
