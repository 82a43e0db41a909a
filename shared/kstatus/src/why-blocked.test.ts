// Unit test (no cluster): the blocking chain over objects shaped as the operators write them,
// looked up from a plain list that stands in for a watch cache.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChainObject, chainLines, whyBlocked } from './why-blocked.ts';

const ready = (status: string, reason: string, message: string) => ({
  conditions: [{ type: 'Ready', status, reason, message }],
});
const obj = (kind: string, name: string, spec: object, status?: object, labels?: Record<string, string>) =>
  ({ kind, metadata: { name, namespace: 'team', labels }, spec, status }) as ChainObject;
const ks = (name: string, spec: object, status?: object, labels?: Record<string, string>) =>
  obj(
    'Kustomization',
    name,
    { sourceRef: { kind: 'GitRepository', name: 'platform' }, ...spec },
    status,
    labels,
  );
const lookupOf =
  (...objects: ChainObject[]) =>
  (kind: string, namespace: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name);
const good = obj('GitRepository', 'platform', {}, ready('True', 'Succeeded', 'stored'));
const waiting = ready('False', 'DependencyNotReady', 'x');

test('A → B → C with the source of C failing: every hop, and the error of the source', () => {
  const a = ks('a', { dependsOn: [{ name: 'b' }] }, waiting);
  const b = ks('b', { dependsOn: [{ name: 'c' }] }, waiting);
  const c = obj('Kustomization', 'c', { sourceRef: { kind: 'GitRepository', name: 'broken' } }, waiting);
  const broken = obj(
    'GitRepository',
    'broken',
    {},
    ready('False', 'GitOperationFailed', 'repository not found'),
  );
  const why = whyBlocked(a, lookupOf(good, a, b, c, broken));
  assert.equal(
    why?.sentence,
    'Kustomization team/a depends on Kustomization team/b, which depends on Kustomization team/c, which waits for its source GitRepository team/broken, which failed: GitOperationFailed: repository not found.',
  );
  assert.deepEqual(why?.blocking, { kind: 'GitRepository', namespace: 'team', name: 'broken' });
  assert.deepEqual(chainLines(why!), [
    'Kustomization team/a depends on Kustomization team/b',
    'Kustomization team/b depends on Kustomization team/c',
    'Kustomization team/c reads its source GitRepository team/broken',
    'GitRepository team/broken failed: GitOperationFailed: repository not found',
  ]);
});

test('a HelmRelease on a Kustomization that waits on health names the object and its kstatus message', () => {
  const hr = obj('HelmRelease', 'db', { dependsOn: [{ kind: 'Kustomization', name: 'infra' }] }, waiting);
  const infra = ks(
    'infra',
    { wait: true },
    ready('Unknown', 'Progressing', 'waiting for 2 objects to become healthy'),
  );
  const health = (o: ChainObject) =>
    o.metadata.name === 'infra'
      ? [
          {
            kind: 'Deployment',
            namespace: 'team',
            name: 'registry',
            status: 'InProgress',
            message: 'Available: 0/1',
          },
        ]
      : undefined;
  assert.equal(
    whyBlocked(hr, lookupOf(good, hr, infra), health)?.sentence,
    'HelmRelease team/db depends on Kustomization team/infra, which waits for the health check of Deployment team/registry: InProgress, Available: 0/1.',
  );
});

test('each other blocker in one sentence', () => {
  const cases: [string, ChainObject, ChainObject[], string][] = [
    [
      'a cycle',
      ks('a', { dependsOn: [{ name: 'b' }] }, waiting),
      [ks('b', { dependsOn: [{ name: 'a' }] }, waiting)],
      'Kustomization team/a depends on Kustomization team/b, which depends on Kustomization team/a again: a dependency cycle.',
    ],
    [
      'a suspended dependency',
      ks('a', { dependsOn: [{ name: 'b' }] }, waiting),
      [ks('b', { suspend: true }, ready('True', 'ReconciliationSucceeded', 'Applied'))],
      'Kustomization team/a depends on Kustomization team/b, which is suspended.',
    ],
    [
      'the deletion budget',
      ks(
        'a',
        {},
        ready('False', 'PruneBudgetExceeded', 'prune would delete 9 of 10 objects, over the budget of 5'),
      ),
      [],
      'Kustomization team/a is held by its deletion budget: PruneBudgetExceeded: prune would delete 9 of 10 objects, over the budget of 5.',
    ],
    [
      'a paused KustomizationSet step',
      ks('edge-1', {}, ready('True', 'ReconciliationSucceeded', 'Applied'), {
        'kustomize.mooring.dev/set-name': 'edge',
      }),
      [
        obj(
          'KustomizationSet',
          'edge',
          {},
          {
            rollout: { step: 2, phase: 'Paused', message: 'spec.paused is true' },
            members: [{ kustomization: 'edge-1', state: 'Outdated' }],
          },
        ),
      ],
      'Kustomization team/edge-1 is held back by KustomizationSet team/edge, whose rollout is paused: spec.paused is true.',
    ],
  ];
  for (const [what, self, others, sentence] of cases)
    assert.equal(whyBlocked(self, lookupOf(good, self, ...others))?.sentence, sentence, what);
});

test('a Ready object with Ready dependencies is not blocked', () => {
  const ok = ready('True', 'ReconciliationSucceeded', 'Applied');
  const a = ks('a', { dependsOn: [{ name: 'b' }] }, ok);
  assert.equal(whyBlocked(a, lookupOf(good, a, ks('b', {}, ok))), undefined);
});
