import assert from 'node:assert/strict';
import { test } from 'node:test';
import { persistentVolumeClaimStatus } from './persistent-volume-claim.ts';

const pvc = (phase?: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'apps' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  status: phase ? { phase } : {},
});

for (const [phase, want] of [
  ['Bound', 'Current'],
  ['Pending', 'InProgress'],
  ['Lost', 'InProgress'],
  [undefined, 'InProgress'],
] as const) {
  test(`PersistentVolumeClaim in phase ${phase ?? '(none)'} is ${want}`, () => {
    const result = persistentVolumeClaimStatus(pvc(phase));
    assert.equal(result.status, want);
    if (want === 'InProgress') assert.equal(result.reason, 'NotBound');
  });
}
