import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSteps, step, stepTimer } from './steps.ts';

test('runSteps runs the steps in order over one state and keeps the lowest requeue', async () => {
  const seen: string[] = [];
  const state = { trail: [] as string[] };
  const outcome = await runSteps(
    [
      step<typeof state>('first', (s) => {
        s.trail.push('a');
        return { requeueAfterMs: 5_000 };
      }),
      step<typeof state>('second', async (s) => {
        s.trail.push('b');
        return undefined;
      }),
      step<typeof state>('third', (s) => {
        s.trail.push('c');
        return { requeueAfterMs: 2_000 };
      }),
    ],
    state,
    (name) => seen.push(name),
  );
  assert.deepEqual(state.trail, ['a', 'b', 'c']);
  assert.deepEqual(seen, ['first', 'second', 'third']);
  assert.deepEqual(outcome, { requeueAfterMs: 2_000 });
});

test('runSteps stops at the first step that throws and runs nothing after it', async () => {
  const ran: string[] = [];
  await assert.rejects(
    runSteps(
      [
        step('ok', () => {
          ran.push('ok');
          return undefined;
        }),
        step('boom', () => {
          throw new Error('boom');
        }),
        step('never', () => {
          ran.push('never');
          return undefined;
        }),
      ],
      {},
    ),
    /boom/,
  );
  assert.deepEqual(ran, ['ok']);
});

test('runSteps with no requeue asked returns none', async () => {
  assert.deepEqual(await runSteps([step('quiet', () => undefined)], {}), {});
});

test('runSteps reports how long each step took, the one that threw included, as stepTimer records it', async () => {
  const observed: [string, string, number][] = [];
  const onStepEnd = stepTimer(
    { observeStep: (kind, name, s) => observed.push([kind, name, s]) },
    'Kustomization',
  );
  await assert.rejects(
    runSteps(
      [
        step('wait', () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20))),
        step('fail', () => {
          throw new Error('broken');
        }),
        step('never', () => undefined),
      ],
      {},
      undefined,
      onStepEnd,
    ),
    /broken/,
  );
  assert.deepEqual(
    observed.map(([kind, name]) => `${kind}/${name}`),
    ['Kustomization/wait', 'Kustomization/fail'],
  );
  // setTimeout may fire a little early by the performance clock, never much.
  assert.ok(observed[0]![2] >= 0.015, `the waiting step took ${observed[0]![2]} s`);
  assert.equal(stepTimer(undefined, 'Kustomization'), undefined);
});
