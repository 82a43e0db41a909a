// Unit test (no cluster): the explainer over objects shaped as the operators write them, looked up
// from a plain map that stands in for the UI's watch cache.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { whyNotApplied } from '../src/ui/why-not-applied.ts';

const ready = (status: string, reason: string, message: string) => ({
  conditions: [{ type: 'Ready', status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' }],
});

function obj(
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  status?: Record<string, unknown>,
): KubeObject {
  return { apiVersion: 'x/v1', kind, metadata: { name, namespace: 'team' }, spec, status };
}

const source = (status: Record<string, unknown>) =>
  obj('GitRepository', 'platform', { url: 'https://x' }, status);
const ks = (name: string, spec: Record<string, unknown>, status?: Record<string, unknown>) =>
  obj(
    'Kustomization',
    name,
    { sourceRef: { kind: 'GitRepository', name: 'platform' }, path: './x', ...spec },
    status,
  );

function lookupOf(...objects: KubeObject[]) {
  return (kind: string, namespace: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name);
}

const goodSource = source(ready('True', 'Succeeded', 'stored artifact for revision main@sha1:abc'));

test('a Ready object needs no explanation', () => {
  const apps = ks('apps', {}, ready('True', 'ReconciliationSucceeded', 'Applied revision: main@sha1:abc'));
  assert.equal(whyNotApplied(apps, lookupOf(goodSource, apps)), undefined);
});

test('each blocking edge in one sentence, naming the object to open', () => {
  const cases: {
    what: string;
    object: KubeObject;
    others: KubeObject[];
    sentence: RegExp;
    blocking?: string;
  }[] = [
    {
      what: 'suspended',
      object: ks('apps', { suspend: true }, ready('True', 'ReconciliationSucceeded', 'Applied')),
      others: [goodSource],
      sentence: /^Kustomization team\/apps is suspended, so nothing is applied until it is resumed\.$/,
    },
    {
      what: 'source missing',
      object: ks('apps', {}, ready('False', 'ArtifactFailed', 'GitRepository team/platform not found')),
      others: [],
      sentence:
        /^Kustomization team\/apps waits for its source GitRepository team\/platform, which does not exist\.$/,
      blocking: 'GitRepository/platform',
    },
    {
      what: 'source failing, with its reason',
      object: ks(
        'apps',
        {},
        ready('False', 'ArtifactFailed', 'GitRepository team/platform has no artifact yet'),
      ),
      others: [source(ready('False', 'GitOperationFailed', 'authentication required'))],
      sentence:
        /^Kustomization team\/apps waits for its source GitRepository team\/platform, which failed: GitOperationFailed: authentication required\.$/,
      blocking: 'GitRepository/platform',
    },
    {
      what: 'dependency not Ready names every hop of the chain and the reason of its root',
      object: ks(
        'apps',
        { dependsOn: [{ name: 'infra' }] },
        ready('False', 'DependencyNotReady', 'dependency team/infra is not ready'),
      ),
      others: [
        goodSource,
        ks(
          'infra',
          { dependsOn: [{ name: 'crds' }] },
          ready('False', 'DependencyNotReady', 'dependency team/crds is not ready'),
        ),
        ks('crds', {}, ready('False', 'BuildFailed', 'kustomization.yaml: resource missing.yaml not found')),
      ],
      sentence:
        /^Kustomization team\/apps depends on Kustomization team\/infra, which depends on Kustomization team\/crds, which is not Ready \(BuildFailed: kustomization\.yaml: resource missing\.yaml not found\)\.$/,
      blocking: 'Kustomization/crds',
    },
    {
      what: 'dependency that does not exist',
      object: ks('apps', { dependsOn: [{ name: 'infra' }] }, ready('False', 'DependencyNotReady', 'x')),
      others: [goodSource],
      sentence: /^Kustomization team\/apps depends on Kustomization team\/infra, which does not exist\.$/,
      blocking: 'Kustomization/infra',
    },
    {
      what: 'a HelmRelease depending on a Kustomization by kind',
      object: obj(
        'HelmRelease',
        'db',
        {
          chart: { spec: { chart: 'db', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
          dependsOn: [{ kind: 'Kustomization', name: 'infra' }],
        },
        ready('False', 'DependencyNotReady', 'x'),
      ),
      others: [
        obj('HelmRepository', 'charts', { url: 'https://charts' }, ready('True', 'Succeeded', 'ok')),
        ks('infra', { suspend: true }, ready('Unknown', 'Progressing', 'reconciling')),
      ],
      sentence: /^HelmRelease team\/db depends on Kustomization team\/infra, which is suspended\.$/,
      blocking: 'Kustomization/infra',
    },
    {
      what: 'health check still waiting, on which object',
      object: ks(
        'apps',
        { wait: true },
        ready('Unknown', 'Progressing', 'Applied revision, waiting for health'),
      ),
      others: [goodSource],
      sentence:
        /^Kustomization team\/apps waits for the health check of Deployment team\/model-server: InProgress, Deployment does not have minimum availability\.$/,
      blocking: 'Deployment/model-server',
    },
    {
      what: 'its own failure',
      object: ks('apps', {}, ready('False', 'BuildFailed', 'kustomize build failed: accumulating resources')),
      others: [goodSource],
      sentence:
        /^Kustomization team\/apps failed: BuildFailed: kustomize build failed: accumulating resources\.$/,
    },
    {
      what: 'never reconciled',
      object: ks('apps', {}),
      others: [goodSource],
      sentence: /^Kustomization team\/apps has not been reconciled yet: is its operator running\?$/,
    },
  ];
  for (const c of cases) {
    const health = c.what.startsWith('health')
      ? [
          { kind: 'ConfigMap', namespace: 'team', name: 'x', status: 'Current', message: '' },
          {
            kind: 'Deployment',
            namespace: 'team',
            name: 'model-server',
            status: 'InProgress',
            message: 'Deployment does not have minimum availability',
          },
        ]
      : [];
    const got = whyNotApplied(c.object, lookupOf(c.object, ...c.others), health);
    assert.ok(got, c.what);
    assert.match(got.sentence, c.sentence, c.what);
    assert.equal(got.blocking ? `${got.blocking.kind}/${got.blocking.name}` : undefined, c.blocking, c.what);
  }
});

test('a dependency cycle ends the walk instead of looping', () => {
  const a = ks(
    'a',
    { dependsOn: [{ name: 'b' }] },
    ready('False', 'DependencyCycle', 'dependency cycle: a → b → a'),
  );
  const b = ks(
    'b',
    { dependsOn: [{ name: 'a' }] },
    ready('False', 'DependencyCycle', 'dependency cycle: b → a → b'),
  );
  const got = whyNotApplied(a, lookupOf(goodSource, a, b));
  assert.match(
    got?.sentence ?? '',
    /^Kustomization team\/a depends on Kustomization team\/b, which depends on Kustomization team\/a again: a dependency cycle\.$/,
  );
});
