// Unit test (no cluster): the fleet view and its "why" over a KustomizationSet shaped as the
// operator writes it, for the states the cluster test does not reach (paused, a member not yet created).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { fleetView, fleetWhy } from '../src/ui/fleet-view.ts';

const member = (name: string, state: string, ready: string, revision: string, message = '') => ({
  name,
  kustomization: `agent-${name}`,
  revision,
  ready,
  state,
  message,
});

const set = (rollout: Record<string, unknown>, paused: boolean): KubeObject => ({
  apiVersion: 'kustomize.mooring.dev/v1',
  kind: 'KustomizationSet',
  metadata: { name: 'agents', namespace: 'team' },
  spec: {
    strategy: {
      rollingUpdate: {
        paused,
        steps: [
          { selector: { matchLabels: { env: 'staging' } } },
          { selector: { matchLabels: { region: 'eu' } } },
        ],
      },
    },
  },
  status: {
    revision: 'rev2',
    rollout,
    members: [
      member('staging', 'Current', 'True', 'rev2'),
      member('eu-1', 'Outdated', 'False', 'rev1', 'health check failed: Deployment agent: 0 of 1 ready'),
      member('us-1', 'Outdated', 'True', 'rev1'),
    ],
    counts: { total: 3, ready: 2, current: 1, failed: 0, unreachable: 0 },
  },
});

const held = new Set(['Kustomization/team/agent-staging', 'Kustomization/team/agent-eu-1']);
const lookup = (kind: string, ns: string, name: string) =>
  held.has(`${kind}/${ns}/${name}`) ? ({ metadata: { name } } as KubeObject) : undefined;

test('a paused rollout: the steps around it, members against the target, and the sentence', () => {
  const obj = set(
    { step: 2, phase: 'Paused', message: 'paused before updating 1 member(s) of step 2' },
    true,
  );
  const fleet = fleetView(obj, lookup);
  assert.deepEqual(
    fleet.steps.map((s) => [s.selects, s.state]),
    [
      ['env=staging', 'done'],
      ['region=eu', 'paused'],
      ['every other member', 'waiting'],
    ],
  );
  assert.deepEqual(
    fleet.members.map((m) => [m.name, m.atTarget, m.exists]),
    [
      ['staging', true, true],
      ['eu-1', false, true],
      ['us-1', false, false],
    ],
  );
  const why = fleetWhy(obj, fleet);
  assert.equal(
    why?.sentence,
    'KustomizationSet team/agents: the rollout is paused at step 2 of 3 (spec.strategy.rollingUpdate.paused): ' +
      'paused before updating 1 member(s) of step 2; not Ready: eu-1 (Outdated: health check failed: Deployment agent: 0 of 1 ready).',
  );
  assert.deepEqual(why?.blocking, { kind: 'Kustomization', namespace: 'team', name: 'agent-eu-1' });
});

test('a complete rollout with every member fine has nothing to explain', () => {
  const obj = set({ step: 0, phase: 'Complete', message: 'every member holds the current revision' }, false);
  (obj.status as { members: ReturnType<typeof member>[] }).members = [
    member('staging', 'Current', 'True', 'rev2'),
  ];
  const fleet = fleetView(obj, lookup);
  assert.ok(fleet.steps.every((s) => s.state === 'done'));
  assert.equal(fleetWhy(obj, fleet), undefined);
});
