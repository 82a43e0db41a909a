import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedDeletions, checkBudget } from './deletion-budget.ts';

test('a budget is a count or a percentage of the inventory, rounded up', () => {
  const cases: [number | string, number, number | undefined][] = [
    [3, 10, 3],
    [0, 10, 0],
    ['50%', 4, 2],
    ['50%', 5, 3],
    ['10%', 1, 1],
    ['0%', 10, 0],
    ['100%', 7, 7],
    ['4', 10, 4],
    ['101%', 10, undefined],
    [-1, 10, undefined],
    ['half', 10, undefined],
  ];
  for (const [budget, inventory, want] of cases)
    assert.equal(allowedDeletions(budget, inventory), want, `${budget} of ${inventory}`);
});

test('over the budget is flagged; unset means 50 %', () => {
  assert.deepEqual(checkBudget({}, 4, 3), {
    budget: '50%',
    fromSpec: false,
    allowed: 2,
    deletions: 3,
    exceeded: true,
  });
  assert.equal(checkBudget({ deletionBudget: 3 }, 4, 3).exceeded, false);
  assert.equal(checkBudget({ deletionBudget: '25%' }, 8, 3).exceeded, true);
  assert.equal(checkBudget({}, 4, 2).exceeded, false);
});
