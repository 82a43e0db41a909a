import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kustomization } from '@mooring/api';
import { checkDependencies, dependentsOf, findDependencyCycle } from './dependencies.ts';

function ks(
  name: string,
  opts: {
    dependsOn?: { name: string; readyExpr?: string }[];
    ready?: 'True' | 'False';
    generation?: number;
    observed?: number;
    applied?: string;
    source?: string;
  } = {},
): Kustomization {
  return {
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'apps', generation: opts.generation ?? 1 },
    spec: {
      interval: '5m',
      prune: true,
      sourceRef: { kind: 'GitRepository', name: opts.source ?? 'repo' },
      dependsOn: opts.dependsOn,
    },
    status: {
      observedGeneration: opts.observed ?? 1,
      lastAppliedRevision: opts.applied,
      conditions: opts.ready
        ? [
            {
              type: 'Ready',
              status: opts.ready,
              reason: 'x',
              message: 'msg',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ]
        : [],
    },
  } as Kustomization;
}

const REV = 'main@sha1:1111111111111111111111111111111111111111';

test('dependency readiness follows Flux', () => {
  const self = ks('app', { dependsOn: [{ name: 'infra' }] });
  const cases: [string, Kustomization | undefined, boolean, RegExp?][] = [
    ['ready on the same revision', ks('infra', { ready: 'True', applied: REV }), true],
    ['missing', undefined, false, /not found/],
    ['not ready', ks('infra', { ready: 'False', applied: REV }), false, /Ready is False/],
    [
      'stale generation',
      ks('infra', { ready: 'True', applied: REV, generation: 2, observed: 1 }),
      false,
      /generation/,
    ],
    [
      'older revision of the same source',
      ks('infra', { ready: 'True', applied: 'main@sha1:0000' }),
      false,
      /not applied yet/,
    ],
    ['other source, any revision', ks('infra', { ready: 'True', applied: 'x', source: 'other' }), true],
  ];
  for (const [what, dep, ready, message] of cases) {
    const verdict = checkDependencies(self, new Map([['apps/infra', dep]]), REV);
    assert.equal(verdict.ready, ready, what);
    if (!verdict.ready && message) assert.match(verdict.message, message, what);
  }
});

test('readyExpr replaces the built-in check; a broken one is reported as such', () => {
  const dep = ks('infra', { ready: 'False', applied: 'old' });
  const verdict = (expr: string) =>
    checkDependencies(
      ks('app', { dependsOn: [{ name: 'infra', readyExpr: expr }] }),
      new Map([['apps/infra', dep]]),
      REV,
    );
  assert.equal(verdict("dep.metadata.name == 'infra'").ready, true);
  assert.equal(
    verdict("dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')").ready,
    false,
  );
  const broken = verdict('dep.(');
  assert.ok(!broken.ready && broken.reason === 'InvalidCELExpression');
  const notBool = verdict('dep.metadata.name');
  assert.ok(!notBool.ready && notBool.reason === 'InvalidCELExpression' && /boolean/.test(notBool.message));
});

test('cycles through self are found at any length; a diamond is not a cycle', () => {
  const graph = new Map<string, Kustomization>();
  const add = (k: Kustomization) => graph.set(`apps/${k.metadata.name}`, k);
  const lookup = (key: string) => graph.get(key);
  add(ks('a', { dependsOn: [{ name: 'a' }] }));
  assert.deepEqual(findDependencyCycle(graph.get('apps/a')!, lookup), ['apps/a', 'apps/a']);
  add(ks('b', { dependsOn: [{ name: 'c' }] }));
  add(ks('c', { dependsOn: [{ name: 'd' }] }));
  add(ks('d', { dependsOn: [{ name: 'b' }] }));
  assert.deepEqual(findDependencyCycle(graph.get('apps/b')!, lookup), [
    'apps/b',
    'apps/c',
    'apps/d',
    'apps/b',
  ]);
  add(ks('top', { dependsOn: [{ name: 'left' }, { name: 'right' }] }));
  add(ks('left', { dependsOn: [{ name: 'base' }] }));
  add(ks('right', { dependsOn: [{ name: 'base' }] }));
  add(ks('base'));
  assert.equal(findDependencyCycle(graph.get('apps/top')!, lookup), undefined);
});

test('dependsOn across kinds: keys keep the kinds apart, and a Kustomization may wait on a HelmRelease', () => {
  const hr = {
    kind: 'HelmRelease',
    metadata: { name: 'infra', namespace: 'apps', generation: 1 },
    spec: {},
    status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', message: 'ok' }] },
  };
  const self = ks('app', { dependsOn: [{ name: 'infra', kind: 'HelmRelease' } as { name: string }] });
  // A Kustomization of the same name is not the dependency.
  assert.equal(
    checkDependencies(self, new Map([['apps/infra', ks('infra', { ready: 'True', applied: REV })]]), REV)
      .ready,
    false,
  );
  assert.equal(checkDependencies(self, new Map([['HelmRelease/apps/infra', hr]]), REV).ready, true);
  assert.deepEqual(
    dependentsOf('HelmRelease', hr, [self, ks('other', { dependsOn: [{ name: 'infra' }] })], 'Kustomization'),
    ['apps/app'],
  );
  // A HelmRelease back on the Kustomization closes a cycle across kinds.
  const back = { ...hr, spec: { dependsOn: [{ name: 'app', kind: 'Kustomization' as const }] } };
  assert.deepEqual(
    findDependencyCycle(self, (key) => (key === 'HelmRelease/apps/infra' ? back : undefined)),
    ['apps/app', 'HelmRelease/apps/infra', 'apps/app'],
  );
});
