import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LiveObject } from './result.ts';
import { serviceStatus } from './service.ts';

const service = (spec: LiveObject): LiveObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'apps' },
  spec,
});

const cases: { name: string; spec: LiveObject; want: string }[] = [
  { name: 'ClusterIP with an address', spec: { type: 'ClusterIP', clusterIP: '10.0.0.12' }, want: 'Current' },
  { name: 'headless', spec: { clusterIP: 'None' }, want: 'Current' },
  { name: 'ExternalName', spec: { type: 'ExternalName', externalName: 'db.example.com' }, want: 'Current' },
  { name: 'LoadBalancer without a cluster IP', spec: { type: 'LoadBalancer' }, want: 'InProgress' },
  // kstatus does not wait for status.loadBalancer.ingress.
  {
    name: 'LoadBalancer with a cluster IP but no ingress',
    spec: { type: 'LoadBalancer', clusterIP: '10.0.0.7' },
    want: 'Current',
  },
];

for (const c of cases) {
  test(`Service ${c.name} is ${c.want}`, () => {
    assert.equal(serviceStatus(service(c.spec)).status, c.want);
  });
}
