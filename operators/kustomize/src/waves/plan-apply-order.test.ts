// Unit tests of the pure planning of one revision: hooks by phase and waves of the rest, from the
// rendered objects alone (no cluster).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Manifest } from '../apply/object-policy.ts';
import { ApplyOrderError, planApplyOrder } from './plan-apply-order.ts';

const obj = (kind: string, name: string, annotations: Record<string, string> = {}): Manifest => ({
  apiVersion: kind === 'Job' ? 'batch/v1' : kind === 'Deployment' ? 'apps/v1' : 'v1',
  kind,
  metadata: { name, annotations },
});

const names = (objects: readonly Manifest[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);

test('waves: lower first, unannotated objects in wave 0, render order kept inside a wave', () => {
  const order = planApplyOrder([
    obj('ConfigMap', 'late', { 'mooring.dev/apply-wave': '5' }),
    obj('ConfigMap', 'plain'),
    obj('Service', 'early', { 'mooring.dev/apply-wave': '-1' }),
    obj('ConfigMap', 'also-plain'),
    obj('ConfigMap', 'argo', { 'argocd.argoproj.io/sync-wave': ' 5 ' }),
  ]);
  assert.deepEqual(
    order.waves.map((w) => [w.wave, names(w.objects)]),
    [
      [-1, ['Service/early']],
      [0, ['ConfigMap/plain', 'ConfigMap/also-plain']],
      [5, ['ConfigMap/late', 'ConfigMap/argo']],
    ],
  );
});

test('waves: Namespaces and CRDs go in the first wave whatever their own wave says', () => {
  const order = planApplyOrder([
    obj('ConfigMap', 'a', { 'mooring.dev/apply-wave': '2' }),
    obj('Namespace', 'ns', { 'mooring.dev/apply-wave': '9' }),
  ]);
  assert.deepEqual(
    order.waves.map((w) => [w.wave, names(w.objects)]),
    [[2, ['Namespace/ns', 'ConfigMap/a']]],
  );
});

test("waves: Mooring's annotation wins over Argo CD's", () => {
  const order = planApplyOrder([
    obj('ConfigMap', 'a', { 'mooring.dev/apply-wave': '1', 'argocd.argoproj.io/sync-wave': '-3' }),
    obj('ConfigMap', 'b'),
  ]);
  assert.deepEqual(
    order.waves.map((w) => w.wave),
    [0, 1],
  );
});

test('hooks: by phase, ordered by wave then name, out of the waves; Argo CD types mapped', () => {
  const order = planApplyOrder([
    obj('Job', 'migrate', { 'mooring.dev/hook': 'pre-apply' }),
    obj('Job', 'backup', { 'mooring.dev/hook': 'pre-apply', 'mooring.dev/apply-wave': '1' }),
    obj('Job', 'analyse', { 'mooring.dev/hook': 'pre-apply' }),
    obj('Job', 'smoke', { 'argocd.argoproj.io/hook': 'PostSync' }),
    obj('Job', 'page', { 'argocd.argoproj.io/hook': 'SyncFail' }),
    obj('Job', 'both', { 'mooring.dev/hook': 'post-apply, on-failure' }),
    obj('Job', 'schema', { 'argocd.argoproj.io/hook': 'PreSync' }),
    obj('ConfigMap', 'sync-hook', { 'argocd.argoproj.io/hook': 'Sync' }),
    obj('ConfigMap', 'skipped', { 'argocd.argoproj.io/hook': 'Skip' }),
    obj('Deployment', 'app'),
  ]);
  assert.deepEqual(names(order.hooks['pre-apply'].map((h) => h.object)), [
    'Job/analyse',
    'Job/migrate',
    'Job/schema',
    'Job/backup',
  ]);
  assert.deepEqual(names(order.hooks['post-apply'].map((h) => h.object)), ['Job/both', 'Job/smoke']);
  assert.deepEqual(names(order.hooks['on-failure'].map((h) => h.object)), ['Job/both', 'Job/page']);
  assert.deepEqual(
    order.waves.map((w) => names(w.objects)),
    [['ConfigMap/sync-hook', 'Deployment/app']],
  );
  assert.deepEqual(names(order.skipped), ['ConfigMap/skipped']);
});

test('hooks: delete policies, Mooring and Argo CD spellings, before-hook-creation by default', () => {
  const cases: [Record<string, string>, string[]][] = [
    [{}, ['before-hook-creation']],
    [{ 'mooring.dev/hook-delete-policy': 'hook-succeeded' }, ['hook-succeeded']],
    [
      { 'mooring.dev/hook-delete-policy': 'hook-failed,before-hook-creation' },
      ['hook-failed', 'before-hook-creation'],
    ],
    [
      { 'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded,BeforeHookCreation' },
      ['hook-succeeded', 'before-hook-creation'],
    ],
    [{ 'argocd.argoproj.io/hook-delete-policy': 'HookFailed' }, ['hook-failed']],
  ];
  for (const [annotations, want] of cases) {
    const order = planApplyOrder([obj('Job', 'j', { 'mooring.dev/hook': 'pre-apply', ...annotations })]);
    assert.deepEqual(order.hooks['pre-apply'][0]?.policies, want, JSON.stringify(annotations));
  }
});

test('invalid annotations: every one named in one error, nothing planned', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [
      { 'mooring.dev/apply-wave': 'first' },
      /ConfigMap\/x: mooring\.dev\/apply-wave: 'first' is not an integer/,
    ],
    [{ 'mooring.dev/apply-wave': '1.5' }, /'1\.5' is not an integer/],
    [{ 'argocd.argoproj.io/sync-wave': '' }, /argocd\.argoproj\.io\/sync-wave: '' is not an integer/],
    [
      { 'mooring.dev/hook': 'pre-install' },
      /mooring\.dev\/hook: 'pre-install' is not one of pre-apply, post-apply, on-failure/,
    ],
    [{ 'argocd.argoproj.io/hook': 'PostDelete' }, /PostDelete is not supported/],
    [
      { 'mooring.dev/hook': 'pre-apply', 'mooring.dev/hook-delete-policy': 'always' },
      /'always' is not a list of before-hook-creation, hook-succeeded, hook-failed/,
    ],
  ];
  for (const [annotations, want] of cases) {
    assert.throws(
      () => planApplyOrder([obj('ConfigMap', 'ok'), obj('ConfigMap', 'x', annotations)]),
      (err: unknown) => err instanceof ApplyOrderError && want.test(err.message) && err.problems.length === 1,
      JSON.stringify(annotations),
    );
  }
  assert.throws(
    () =>
      planApplyOrder([
        obj('ConfigMap', 'a', { 'mooring.dev/apply-wave': 'x' }),
        obj('ConfigMap', 'b', { 'mooring.dev/hook': 'x' }),
      ]),
    (err: unknown) => err instanceof ApplyOrderError && err.problems.length === 2,
  );
});

test('a render without annotations is one wave, as before waves existed', () => {
  const order = planApplyOrder([obj('Namespace', 'ns'), obj('ConfigMap', 'a'), obj('Deployment', 'b')]);
  assert.deepEqual(
    order.waves.map((w) => [w.wave, names(w.objects)]),
    [[0, ['Namespace/ns', 'ConfigMap/a', 'Deployment/b']]],
  );
  assert.equal(order.hooks['pre-apply'].length + order.hooks['post-apply'].length, 0);
});
