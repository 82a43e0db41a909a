import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MooringObject } from './controller.ts';
import { resourceInfoOf } from './resource-info.ts';

const meta = { name: 'x', namespace: 'y' };

describe('resourceInfoOf', () => {
  const cases: { what: string; obj: MooringObject; want: ReturnType<typeof resourceInfoOf> }[] = [
    {
      what: 'a Kustomization: the applied revision and its sourceRef',
      obj: {
        apiVersion: 'kustomize.mooring.dev/v1',
        kind: 'Kustomization',
        metadata: meta,
        spec: { sourceRef: { kind: 'GitRepository', name: 'platform' } },
        status: {
          lastAppliedRevision: 'main@sha1:abc',
          conditions: [{ type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: '' }],
        },
      },
      want: {
        ready: 'True',
        suspended: false,
        revision: 'main@sha1:abc',
        sourceKind: 'GitRepository',
        sourceName: 'platform',
      },
    },
    {
      what: "a suspended source: its artifact's revision, no sourceRef",
      obj: {
        apiVersion: 'source.mooring.dev/v1',
        kind: 'GitRepository',
        metadata: meta,
        spec: { suspend: true },
        status: { artifact: { revision: 'v1@sha1:def' } },
      },
      want: { ready: 'Unknown', suspended: true, revision: 'v1@sha1:def', sourceKind: '', sourceName: '' },
    },
    {
      what: "a HelmRelease: its chart template's sourceRef",
      obj: {
        apiVersion: 'helm.mooring.dev/v2',
        kind: 'HelmRelease',
        metadata: meta,
        spec: { chart: { spec: { chart: 'app', sourceRef: { kind: 'HelmRepository', name: 'charts' } } } },
        status: { history: [{ chartVersion: '1.2.0' }, { chartVersion: '1.1.0' }] },
      },
      want: {
        ready: 'Unknown',
        suspended: false,
        revision: '1.2.0',
        sourceKind: 'HelmRepository',
        sourceName: 'charts',
      },
    },
    {
      what: 'an object never reconciled',
      obj: { apiVersion: 'v1', kind: 'Alert', metadata: meta },
      want: { ready: 'Unknown', suspended: false, revision: '', sourceKind: '', sourceName: '' },
    },
  ];
  for (const c of cases) {
    it(c.what, () => assert.deepEqual(resourceInfoOf(c.obj, c.obj.status), c.want));
  }
});
