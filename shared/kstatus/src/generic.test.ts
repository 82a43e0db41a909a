import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkGeneration, checkGeneric } from './generic.ts';
import type { LiveObject } from './result.ts';

function widget(metadata: LiveObject, status?: LiveObject): LiveObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'apps', ...metadata },
    ...(status ? { status } : {}),
  };
}

const cases: { name: string; object: LiveObject; want: string | undefined; reason?: string }[] = [
  {
    name: 'an object being deleted is Terminating',
    object: widget({ deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/cleanup'] }),
    want: 'Terminating',
  },
  {
    name: 'an unobserved generation is InProgress',
    object: widget({ generation: 3 }, { observedGeneration: 2 }),
    want: 'InProgress',
    reason: 'LatestGenerationNotObserved',
  },
  {
    name: 'no observedGeneration skips the generation check',
    object: widget({ generation: 3 }, {}),
    want: undefined,
  },
  {
    name: 'Reconciling=True is InProgress with its reason',
    object: widget(
      { generation: 1 },
      {
        observedGeneration: 1,
        conditions: [{ type: 'Reconciling', status: 'True', reason: 'Progressing', message: 'Fetching' }],
      },
    ),
    want: 'InProgress',
    reason: 'Progressing',
  },
  {
    name: 'Stalled=True is Failed with its reason',
    object: widget(
      { generation: 1 },
      {
        observedGeneration: 1,
        conditions: [{ type: 'Stalled', status: 'True', reason: 'InvalidPath', message: 'no such path' }],
      },
    ),
    want: 'Failed',
    reason: 'InvalidPath',
  },
  {
    name: 'Reconciling=False and Stalled=False decide nothing',
    object: widget(
      { generation: 1 },
      {
        observedGeneration: 1,
        conditions: [
          { type: 'Reconciling', status: 'False' },
          { type: 'Stalled', status: 'False' },
        ],
      },
    ),
    want: undefined,
  },
  {
    name: 'deletion wins over Stalled',
    object: widget(
      { deletionTimestamp: '2026-01-01T00:00:00Z' },
      { conditions: [{ type: 'Stalled', status: 'True', reason: 'X' }] },
    ),
    want: 'Terminating',
  },
  {
    name: 'malformed conditions are ignored',
    object: widget({ generation: 1 }, { observedGeneration: 1, conditions: ['Stalled', { type: 7 }, null] }),
    want: undefined,
  },
];

for (const c of cases) {
  test(`generic: ${c.name}`, () => {
    const result = checkGeneric(c.object);
    assert.equal(result?.status, c.want, result?.message);
    if (c.reason) assert.equal(result?.reason, c.reason);
  });
}

test('generic: the generation message names kind and both generations', () => {
  assert.equal(
    checkGeneration(widget({ generation: 3 }, { observedGeneration: 2 }))?.message,
    'Widget generation is 3, but latest observed generation is 2',
  );
});

test('generic: Stalled carries the condition message', () => {
  const result = checkGeneric(
    widget(
      {},
      { conditions: [{ type: 'Stalled', status: 'True', reason: 'InvalidPath', message: 'no such path' }] },
    ),
  );
  assert.equal(result?.message, 'no such path');
});
