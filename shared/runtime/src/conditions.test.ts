import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition as ApiCondition } from '@mooring/api';
import {
  type Condition,
  clearReconciling,
  clearStalled,
  conditionsEqual,
  getCondition,
  isTrue,
  markNotReady,
  markReady,
  markReconciling,
  markRetrying,
  markStalled,
  removeCondition,
  setCondition,
} from './conditions.ts';

// The runtime's Condition and the API schema's must stay interchangeable.
const toApi = (c: Condition): ApiCondition => c;
const fromApi = (c: ApiCondition): Condition => c;
void toApi;
void fromApi;

const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-01T00:05:00.250Z');
const t0 = '2026-01-01T00:00:00Z';
const t1 = '2026-01-01T00:05:00Z';

function cond(
  type: string,
  status: Condition['status'],
  reason = 'R',
  extra: Partial<Condition> = {},
): Condition {
  return { type, status, reason, message: '', lastTransitionTime: t0, ...extra };
}

/** type=status/reason for each condition, in order: enough to read a table at a glance. */
function summary(conds: Condition[]): string[] {
  return conds.map((c) => `${c.type}=${c.status}/${c.reason}`);
}

test('setCondition', async (t) => {
  const cases: {
    name: string;
    before: Condition[] | undefined;
    next: Omit<Condition, 'lastTransitionTime'>;
    want: string[];
    wantTime: string;
  }[] = [
    {
      name: 'into nothing',
      before: undefined,
      next: { type: 'Ready', status: 'True', reason: 'Ok', message: 'fine' },
      want: ['Ready=True/Ok'],
      wantTime: t1,
    },
    {
      name: 'same status keeps the transition time, updates reason',
      before: [cond('Ready', 'True', 'Old')],
      next: { type: 'Ready', status: 'True', reason: 'New', message: 'fine' },
      want: ['Ready=True/New'],
      wantTime: t0,
    },
    {
      name: 'changed status moves the transition time',
      before: [cond('Ready', 'True')],
      next: { type: 'Ready', status: 'False', reason: 'Broken', message: 'bad' },
      want: ['Ready=False/Broken'],
      wantTime: t1,
    },
    {
      name: 'a new kind-specific type is appended',
      before: [cond('Ready', 'True'), cond('Healthy', 'True')],
      next: { type: 'ArtifactInStorage', status: 'True', reason: 'Stored', message: '' },
      want: ['Ready=True/R', 'Healthy=True/R', 'ArtifactInStorage=True/Stored'],
      wantTime: t1,
    },
    {
      name: 'Ready, Reconciling, Stalled lead; others keep their order',
      before: [cond('Healthy', 'True'), cond('Stalled', 'True'), cond('FetchFailed', 'True')],
      next: { type: 'Ready', status: 'False', reason: 'Failed', message: '' },
      want: ['Ready=False/Failed', 'Stalled=True/R', 'Healthy=True/R', 'FetchFailed=True/R'],
      wantTime: t1,
    },
    {
      name: 'updating in place keeps the position',
      before: [cond('Ready', 'True'), cond('A', 'True'), cond('B', 'True')],
      next: { type: 'A', status: 'False', reason: 'X', message: '' },
      want: ['Ready=True/R', 'A=False/X', 'B=True/R'],
      wantTime: t1,
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const frozen = c.before && structuredClone(c.before);
      const got = setCondition(c.before, c.next, T1);
      assert.deepEqual(summary(got), c.want);
      assert.equal(getCondition(got, c.next.type)?.lastTransitionTime, c.wantTime);
      assert.deepEqual(c.before, frozen, 'the input is not mutated');
    });
  }
});

test('setCondition copies observedGeneration only when given', () => {
  const withGen = setCondition(
    [],
    { type: 'Ready', status: 'True', reason: 'R', message: 'm', observedGeneration: 3 },
    T0,
  );
  assert.deepEqual(withGen, [
    {
      type: 'Ready',
      status: 'True',
      reason: 'R',
      message: 'm',
      observedGeneration: 3,
      lastTransitionTime: t0,
    },
  ]);
  const without = setCondition([], { type: 'Ready', status: 'True', reason: 'R', message: 'm' }, T0);
  assert.equal('observedGeneration' in without[0]!, false);
});

test('removeCondition, getCondition, isTrue', () => {
  const conds = [cond('Ready', 'True'), cond('Stalled', 'False'), cond('Healthy', 'Unknown')];
  assert.deepEqual(summary(removeCondition(conds, 'Stalled')), ['Ready=True/R', 'Healthy=Unknown/R']);
  assert.deepEqual(removeCondition(undefined, 'Ready'), []);
  assert.equal(removeCondition(conds, 'Absent').length, 3);
  assert.equal(getCondition(conds, 'Healthy')?.status, 'Unknown');
  assert.equal(getCondition(undefined, 'Ready'), undefined);
  assert.equal(isTrue(conds, 'Ready'), true);
  assert.equal(isTrue(conds, 'Stalled'), false);
  assert.equal(isTrue(conds, 'Healthy'), false);
  assert.equal(isTrue(conds, 'Absent'), false);
  assert.equal(isTrue(undefined, 'Ready'), false);
});

test('summarising helpers', async (t) => {
  const reconciling = [cond('Ready', 'Unknown', 'Progressing'), cond('Reconciling', 'True', 'Progressing')];
  const stalled = [cond('Ready', 'False', 'InvalidPath'), cond('Stalled', 'True', 'InvalidPath')];
  const ready = [cond('Ready', 'True', 'ReconciliationSucceeded'), cond('Healthy', 'True')];
  const cases: {
    name: string;
    run: (c: Condition[] | undefined) => Condition[];
    before: Condition[] | undefined;
    want: string[];
  }[] = [
    {
      name: 'markReconciling on a new object',
      run: (c) => markReconciling(c, 'Progressing', 'reconciliation in progress', 1, T1),
      before: undefined,
      want: ['Ready=Unknown/Progressing', 'Reconciling=True/Progressing'],
    },
    {
      name: 'markReconciling on a ready object keeps kind-specific conditions',
      run: (c) => markReconciling(c, 'NewGeneration', 'new generation 2', 2, T1),
      before: ready,
      want: ['Ready=Unknown/Progressing', 'Reconciling=True/NewGeneration', 'Healthy=True/R'],
    },
    {
      name: 'markReconciling re-examines a stall',
      run: (c) => markReconciling(c, 'Progressing', 'retrying', 2, T1),
      before: stalled,
      want: ['Ready=Unknown/Progressing', 'Reconciling=True/Progressing'],
    },
    {
      name: 'markReady ends reconciling',
      run: (c) => markReady(c, 'ReconciliationSucceeded', 'applied main@sha1:abc', 1, T1),
      before: reconciling,
      want: ['Ready=True/ReconciliationSucceeded'],
    },
    {
      name: 'markReady clears a stall',
      run: (c) => markReady(c, 'ReconciliationSucceeded', 'ok', 2, T1),
      before: stalled,
      want: ['Ready=True/ReconciliationSucceeded'],
    },
    {
      name: 'markNotReady while reconciling retries',
      run: (c) => markNotReady(c, 'ReconciliationFailed', 'apply failed', 1, T1),
      before: reconciling,
      want: ['Ready=False/ReconciliationFailed', 'Reconciling=True/ProgressingWithRetry'],
    },
    {
      name: 'markNotReady on a ready object',
      run: (c) => markNotReady(c, 'DependencyNotReady', 'dependency default/infra is not ready', 1, T1),
      before: ready,
      want: ['Ready=False/DependencyNotReady', 'Healthy=True/R'],
    },
    {
      name: 'markNotReady clears a stall',
      run: (c) => markNotReady(c, 'ReconciliationFailed', 'x', 1, T1),
      before: stalled,
      want: ['Ready=False/ReconciliationFailed'],
    },
    {
      name: 'markStalled ends reconciling',
      run: (c) => markStalled(c, 'InvalidPath', 'path ./nope does not exist', 1, T1),
      before: reconciling,
      want: ['Ready=False/InvalidPath', 'Stalled=True/InvalidPath'],
    },
    {
      name: 'clearReconciling',
      run: clearReconciling,
      before: reconciling,
      want: ['Ready=Unknown/Progressing'],
    },
    {
      name: 'clearStalled',
      run: clearStalled,
      before: stalled,
      want: ['Ready=False/InvalidPath'],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.deepEqual(summary(c.run(c.before)), c.want);
    });
  }
});

test('helpers record message, generation and transition times', () => {
  const started = markReconciling(undefined, 'Progressing', 'working', 4, T0);
  assert.deepEqual(getCondition(started, 'Ready'), {
    type: 'Ready',
    status: 'Unknown',
    reason: 'Progressing',
    message: 'working',
    observedGeneration: 4,
    lastTransitionTime: t0,
  });
  const failed = markNotReady(started, 'ReconciliationFailed', 'boom', 4, T1);
  const retry = getCondition(failed, 'Reconciling')!;
  assert.equal(retry.lastTransitionTime, t0, 'Reconciling stayed True: no transition');
  assert.equal(retry.message, 'working');
  assert.equal(getCondition(failed, 'Ready')?.lastTransitionTime, t1);
  assert.equal(getCondition(failed, 'Ready')?.message, 'boom');
});

test('conditionsEqual', async (t) => {
  const a = cond('Ready', 'True', 'Ok', { message: 'm', observedGeneration: 2 });
  const b = cond('Healthy', 'True');
  const cases: { name: string; x: Condition[] | undefined; y: Condition[] | undefined; want: boolean }[] = [
    { name: 'both empty', x: undefined, y: [], want: true },
    { name: 'same', x: [a, b], y: [a, b], want: true },
    { name: 'order ignored', x: [a, b], y: [b, a], want: true },
    { name: 'one missing', x: [a, b], y: [a], want: false },
    { name: 'different type', x: [a], y: [b], want: false },
    { name: 'status differs', x: [a], y: [{ ...a, status: 'False' }], want: false },
    { name: 'reason differs', x: [a], y: [{ ...a, reason: 'Other' }], want: false },
    { name: 'message differs', x: [a], y: [{ ...a, message: 'other' }], want: false },
    { name: 'generation differs', x: [a], y: [{ ...a, observedGeneration: 3 }], want: false },
    { name: 'time differs', x: [a], y: [{ ...a, lastTransitionTime: t1 }], want: false },
    {
      name: 'same instant, other precision',
      x: [a],
      y: [{ ...a, lastTransitionTime: '2026-01-01T00:00:00.000Z' }],
      want: true,
    },
    { name: 'duplicate type does not mask a missing one', x: [a, a], y: [a, b], want: false },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.equal(conditionsEqual(c.x, c.y), c.want);
      assert.equal(conditionsEqual(c.y, c.x), c.want, 'symmetric');
    });
  }
});

test('setting what is already there is a no-op by conditionsEqual', () => {
  const before = markReady(undefined, 'ReconciliationSucceeded', 'ok', 1, T0);
  const after = markReady(before, 'ReconciliationSucceeded', 'ok', 1, T1);
  assert.equal(conditionsEqual(before, after), true);
});

test('markRetrying sets Reconciling True and Ready False with their own reasons, and drops Stalled', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const stalled = markStalled(undefined, 'InvalidSpec', 'bad', 1, now);
  const next = markRetrying(stalled, 'ProgressingWithRetry', 'ArtifactFailed', 'fetch failed', 2, now);
  assert.equal(getCondition(next, 'Stalled'), undefined);
  assert.deepEqual(
    next.map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
    [
      ['Ready', 'False', 'ArtifactFailed', 'fetch failed', 2],
      ['Reconciling', 'True', 'ProgressingWithRetry', 'fetch failed', 2],
    ],
  );
});
