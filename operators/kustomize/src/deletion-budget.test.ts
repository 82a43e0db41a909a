import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deletionAllowance, judgePrune, parseDeletionBudget } from './deletion-budget.ts';

test('a deletion budget is a count or a percentage; anything else is refused with the value', () => {
  const cases: [number | string, ReturnType<typeof parseDeletionBudget> | RegExp][] = [
    [0, { count: 0 }],
    [7, { count: 7 }],
    ['7', { count: 7 }],
    ['0%', { percent: 0 }],
    ['50%', { percent: 50 }],
    ['100%', { percent: 100 }],
    ['101%', /"101%" is neither/],
    [-1, /-1 is neither/],
    [1.5, /1.5 is neither/],
    ['half', /"half" is neither/],
  ];
  for (const [value, want] of cases) {
    if (want instanceof RegExp) assert.throws(() => parseDeletionBudget(value), want, String(value));
    else assert.deepEqual(parseDeletionBudget(value), want, String(value));
  }
});

test('a percentage of the inventory rounds up, so one object of one can still be renamed under 50%', () => {
  const cases: [ReturnType<typeof parseDeletionBudget>, number, number][] = [
    [{ percent: 50 }, 10, 5],
    [{ percent: 50 }, 9, 5],
    [{ percent: 50 }, 1, 1],
    [{ percent: 50 }, 0, 0],
    [{ percent: 0 }, 10, 0],
    [{ percent: 100 }, 10, 10],
    [{ count: 3 }, 100, 3],
  ];
  for (const [budget, size, want] of cases)
    assert.equal(deletionAllowance(budget, size), want, `${JSON.stringify(budget)} of ${size}`);
});

test('over the budget the prune is refused, listing what would go, unless this very revision is approved', () => {
  const doomed = Array.from({ length: 12 }, (_, i) => `ConfigMap/apps/cm-${i}`);
  const base = {
    doomed,
    inventorySize: 14,
    budget: { percent: 50 },
    revision: 'main@sha1:bbb',
    approveCommand: 'mooring approve prune ks/apps -n apps',
  };
  const refused = judgePrune({ ...base, approvedRevision: undefined });
  assert.equal(refused.allowed, false);
  if (refused.allowed) return;
  assert.equal(refused.allowance, 7);
  assert.match(refused.message, /would delete 12 of 14 objects, over the deletion budget of 7 \(50% of 14\)/);
  assert.match(
    refused.message,
    /ConfigMap\/apps\/cm-0, .*ConfigMap\/apps\/cm-9 and 2 more; nothing was deleted/,
  );
  assert.doesNotMatch(refused.message, /cm-10/);
  assert.match(refused.message, /'mooring approve prune ks\/apps -n apps'/);

  // An approval of an earlier revision does not carry over to a later prune set.
  assert.equal(judgePrune({ ...base, approvedRevision: 'main@sha1:aaa' }).allowed, false);
  assert.deepEqual(judgePrune({ ...base, approvedRevision: 'main@sha1:bbb' }), {
    allowed: true,
    approved: true,
  });
  assert.deepEqual(judgePrune({ ...base, doomed: doomed.slice(0, 7), approvedRevision: undefined }), {
    allowed: true,
    approved: false,
  });
});
