// Table tests of the member kinds over plain objects (no API server): which kind a template makes,
// how each checks a rendered spec, and when each stands at its revision.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MemberObject } from './member-kinds.ts';
import { HELM_RELEASE_MEMBER, KUSTOMIZATION_MEMBER, memberKindOf } from './member-kinds.ts';
import { renderMembers } from './render-members.ts';

const chart = { spec: { chart: './charts/probe', sourceRef: { kind: 'GitRepository', name: 'charts' } } };

function object(generation: number, status: Record<string, unknown>): MemberObject {
  return {
    apiVersion: 'x',
    kind: 'x',
    metadata: { name: 'm', generation, annotations: { 'kustomize.mooring.dev/set-revision': 'r1' } },
    spec: { interval: '1m' },
    status,
  } as unknown as MemberObject;
}

const ready = (status: string, observedGeneration: number) => ({
  conditions: [{ type: 'Ready', status, reason: 'X', message: `Ready ${status}`, observedGeneration }],
});
const release = (version: number, releaseStatus: string, configDigest: string) => ({
  history: [{ version, status: releaseStatus, chartName: 'probe', chartVersion: '0.1.0', configDigest }],
});

describe('memberKindOf', () => {
  test('a template without kind makes Kustomizations, as every set did before', () => {
    assert.equal(memberKindOf({}), KUSTOMIZATION_MEMBER);
  });
  test('kind HelmRelease, with or without its apiVersion, makes HelmReleases', () => {
    assert.equal(memberKindOf({ kind: 'HelmRelease' }), HELM_RELEASE_MEMBER);
    assert.equal(
      memberKindOf({ kind: 'HelmRelease', apiVersion: 'helm.mooring.dev/v2' }),
      HELM_RELEASE_MEMBER,
    );
  });
  test('an apiVersion that does not serve the kind is a template error naming the right one', () => {
    assert.throws(
      () => memberKindOf({ kind: 'HelmRelease', apiVersion: 'kustomize.mooring.dev/v1' }),
      /does not serve HelmRelease: use helm.mooring.dev\/v2/,
    );
  });
});

describe('specError', () => {
  test('each kind checks a rendered spec against its own schema', () => {
    assert.equal(HELM_RELEASE_MEMBER.specError({ interval: '5m', chart: chart }), undefined);
    assert.match(HELM_RELEASE_MEMBER.specError({ interval: '5m', chart: {} }) ?? '', /chart/);
    assert.match(KUSTOMIZATION_MEMBER.specError({ interval: '5m', chart }) ?? '', /./);
  });
  test("a HelmRelease spec with neither or both of chart and chartRef fails as the CRD's rule would", () => {
    assert.match(
      HELM_RELEASE_MEMBER.specError({ interval: '5m' }) ?? '',
      /exactly one of chart and chartRef/,
    );
    const both = { interval: '5m', chart, chartRef: { kind: 'HelmChart', name: 'c' } };
    assert.match(HELM_RELEASE_MEMBER.specError(both) ?? '', /exactly one/);
  });
  test('renderMembers names the kind whose spec did not validate', () => {
    const template = { metadata: { name: 'agent-{{ .n }}' }, spec: { interval: '5m', chart: '{{ .n }}' } };
    assert.throws(
      () => renderMembers(template, [{ params: { n: 'a' }, labels: {} }], HELM_RELEASE_MEMBER),
      /element 1: the rendered spec is not a valid HelmRelease spec/,
    );
  });
});

describe('liveState', () => {
  test('a Kustomization is at its revision when Ready speaks of its generation; its source revision is what it applied', () => {
    const k = object(2, { ...ready('True', 2), lastAppliedRevision: 'main@sha1:abc' });
    assert.deepEqual(KUSTOMIZATION_MEMBER.liveState(k), {
      revision: 'r1',
      generation: 2,
      ready: { status: 'True', message: 'Ready True' },
      appliedRevision: 'main@sha1:abc',
    });
    assert.equal(KUSTOMIZATION_MEMBER.liveState(object(3, ready('True', 2))).ready, undefined);
  });

  const table: [string, Record<string, unknown>, 'True' | 'False' | undefined][] = [
    [
      'Ready at this generation, latest release deployed with the values attempted',
      { ...ready('True', 2), ...release(2, 'deployed', 'd2'), lastAttemptedConfigDigest: 'd2' },
      'True',
    ],
    [
      'Ready of an older generation',
      { ...ready('True', 1), ...release(1, 'deployed', 'd1'), lastAttemptedConfigDigest: 'd1' },
      undefined,
    ],
    [
      'Ready, but the latest release holds other values (a rollback held)',
      { ...ready('True', 2), ...release(3, 'deployed', 'd1'), lastAttemptedConfigDigest: 'd2' },
      undefined,
    ],
    [
      'Ready with a release adopted as it was, nothing attempted yet',
      { ...ready('True', 2), ...release(1, 'deployed', 'd1') },
      'True',
    ],
    [
      'Ready, but the latest release failed',
      { ...ready('True', 2), ...release(2, 'failed', 'd2'), lastAttemptedConfigDigest: 'd2' },
      undefined,
    ],
    [
      'Ready=False at this generation: a failure, whatever the history',
      { ...ready('False', 2), ...release(2, 'failed', 'd2'), lastAttemptedConfigDigest: 'd2' },
      'False',
    ],
  ];
  for (const [what, status, expected] of table)
    test(`a HelmRelease: ${what}`, () => {
      assert.equal(HELM_RELEASE_MEMBER.liveState(object(2, status)).ready?.status, expected);
    });

  test("a HelmRelease's applied revision is its latest release's chart@version and Helm version", () => {
    const state = HELM_RELEASE_MEMBER.liveState(
      object(2, { ...release(4, 'deployed', 'd'), lastAttemptedConfigDigest: 'd' }),
    );
    assert.equal(state.appliedRevision, 'probe@0.1.0');
    assert.equal(state.releaseVersion, 4);
  });
});
