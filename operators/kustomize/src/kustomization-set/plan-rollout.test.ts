// Table tests of the rollout planner over plain data (no API server): which Kustomizations a
// reconcile writes, and where the rollout stands.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { maxUnavailableOf, type PlanMember, planRollout } from './plan-rollout.ts';

const now = new Date('2026-01-01T00:10:00Z');
const staging = [{ selector: { matchLabels: { env: 'staging' } } }];

function member(name: string, env: string, live: 'new' | 'old' | 'ready' | 'failed' | 'pending'): PlanMember {
  const desiredRevision = 'r2';
  const base = { name, kustomization: `agent-${name}`, labels: { env }, desiredRevision };
  if (live === 'new') return { ...base, live: undefined };
  const revision = live === 'old' ? 'r1' : 'r2';
  const ready =
    live === 'pending'
      ? undefined
      : {
          status: live === 'failed' ? ('False' as const) : ('True' as const),
          message: live === 'failed' ? 'path not found' : 'Applied',
        };
  return { ...base, live: { revision, generation: 2, ready } };
}

describe('planRollout', () => {
  test('new members are all created at once', () => {
    const plan = planRollout(
      [member('s', 'staging', 'new'), member('p', 'prod', 'new')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write.sort(), ['agent-p', 'agent-s']);
  });

  test('an outdated fleet updates the staging step first, the rest waits', () => {
    const plan = planRollout(
      [member('s', 'staging', 'old'), member('p', 'prod', 'old')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write, ['agent-s']);
    assert.deepEqual([plan.rollout.step, plan.rollout.phase], [1, 'Progressing']);
  });

  test('the next step begins when the first is Ready at the new revision', () => {
    const plan = planRollout(
      [member('s', 'staging', 'ready'), member('p', 'prod', 'old')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write, ['agent-p']);
    assert.equal(plan.rollout.step, 2);
  });

  test('a member Ready=False at the new revision stops the rollout there', () => {
    const plan = planRollout(
      [member('s', 'staging', 'failed'), member('p', 'prod', 'old')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write, []);
    assert.equal(plan.rollout.phase, 'Failed');
    assert.match(plan.rollout.message, /s: path not found/);
  });

  test('a soak time holds the next step until it has passed', () => {
    const soaking = [{ ...staging[0], soakTime: '5m' }];
    const s = {
      ...member('s', 'staging', 'ready'),
      previous: {
        name: 's',
        kustomization: 'agent-s',
        ready: 'True' as const,
        state: 'Current' as const,
        revision: 'r2',
        readySince: '2026-01-01T00:08:00Z',
      },
    };
    const plan = planRollout([s, member('p', 'prod', 'old')], soaking, false, now);
    assert.deepEqual(plan.write, []);
    assert.equal(plan.requeueAfterMs, 180_000);
    const later = planRollout(
      [s, member('p', 'prod', 'old')],
      soaking,
      false,
      new Date('2026-01-01T00:13:01Z'),
    );
    assert.deepEqual(later.write, ['agent-p']);
  });

  test('maxUnavailable bounds how many of a step update at once', () => {
    const members = ['a', 'b', 'c', 'd'].map((n) => member(n, 'prod', 'old'));
    const plan = planRollout(members, [{ maxUnavailable: '50%' }], false, now);
    assert.deepEqual(plan.write, ['agent-a', 'agent-b']);
    assert.deepEqual(
      [maxUnavailableOf('10%', 4), maxUnavailableOf('3', 10), maxUnavailableOf(undefined, 7)],
      [1, 3, 7],
    );
  });

  test('an unreachable member is skipped and never holds the others back', () => {
    const down = { ...member('s2', 'staging', 'old'), unreachable: 'cluster s2 unreachable' };
    const plan = planRollout(
      [member('s', 'staging', 'ready'), down, member('p', 'prod', 'old')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write, ['agent-p']);
    assert.equal(plan.members.find((m) => m.name === 's2')?.state, 'Unreachable');
  });

  test('paused updates nothing that exists', () => {
    const plan = planRollout([member('s', 'staging', 'old'), member('n', 'prod', 'new')], staging, true, now);
    assert.deepEqual(plan.write, ['agent-n']);
    assert.equal(plan.rollout.phase, 'Paused');
  });

  test('delivery mode git: a committed member nothing can read holds no wave back and is reported Committed', () => {
    const unread = (m: PlanMember): PlanMember => ({ ...m, unobserved: 'no kubeconfig' });
    const plan = planRollout(
      [unread(member('s', 'staging', 'pending')), member('p', 'prod', 'old')],
      staging,
      false,
      now,
    );
    assert.deepEqual(plan.write, ['agent-p']);
    const s = plan.members.find((m) => m.name === 's')!;
    assert.equal(s.state, 'Committed');
    assert.equal(s.ready, 'Unknown');
    assert.equal(s.message, 'no kubeconfig');
    // Outdated, it is written like any other member of its step.
    const outdated = planRollout([unread(member('s', 'staging', 'old'))], staging, false, now);
    assert.deepEqual(outdated.write, ['agent-s']);
  });
});
