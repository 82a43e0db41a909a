// The push → webhook → apply → alert flow that push-to-applied.test.ts checks and
// push-to-applied.bench.ts times: one definition of its operators, manifests and objects.
import { createHmac } from 'node:crypto';
import { KUSTOMIZE_API_VERSION, NOTIFICATION_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { type InProcessOperators, startInProcessOperators } from '@mooring/test/harness';
import { freePort } from '../../../hack/lib/processes.ts';
import { notificationOperator } from '../src/index.ts';

/** GitHub's and generic-hmac's signature header value for `body`. */
export const sign = (key: string, body: string): string =>
  `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;

/** The repository's content at one version: a kustomization with one ConfigMap in `ns`. */
export const manifests = (ns: string, version: string | number): Record<string, string> => ({
  'deploy/kustomization.yaml': 'resources:\n  - config.yaml\n',
  'deploy/config.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: ${ns}
data:
  version: "${version}"
`,
});

/** The source, kustomize and notification operators in this process, events posted to the last. */
export async function startFlowOperators(
  ns: string,
  storage: string,
): Promise<{ operators: InProcessOperators; receiverPort: number; metricsPort: number }> {
  const receiverPort = await freePort();
  const eventsPort = await freePort();
  const operators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator(), notificationOperator()],
    ns,
    [
      '--storage-path',
      storage,
      '--storage-addr',
      '127.0.0.1:0',
      '--receiver-addr',
      `127.0.0.1:${receiverPort}`,
      '--events-listen-addr',
      `127.0.0.1:${eventsPort}`,
      '--events-addr',
      `http://127.0.0.1:${eventsPort}/`,
    ],
  );
  return { operators, receiverPort, metricsPort: operators.metricsPort };
}

export interface FlowSettings {
  repoUrl: string;
  /** Where the generic-hmac Provider posts alerts. */
  alertUrl: string;
  hookToken: string;
  providerToken: string;
}

/**
 * The flow's objects, all named for it, in the order they are created: the two Secrets, the
 * Provider and Alert (so the first apply's events already have somewhere to go), the
 * GitRepository, the Kustomization, the GitHub Receiver.
 */
export function flowObjects(ns: string, s: FlowSettings): KubeObject[] {
  const secret = (name: string, token: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: ns, name },
      stringData: { token },
    }) as KubeObject;
  return [
    secret('webhook-token', s.hookToken),
    secret('alert-hmac', s.providerToken),
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Provider',
      metadata: { namespace: ns, name: 'ops-hook' },
      spec: { type: 'generic-hmac', address: s.alertUrl, secretRef: { name: 'alert-hmac' } },
    } as KubeObject,
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Alert',
      metadata: { namespace: ns, name: 'applied' },
      spec: {
        providerRef: { name: 'ops-hook' },
        eventSeverity: 'info',
        eventSources: [{ kind: 'Kustomization', name: '*' }],
      },
    } as KubeObject,
    {
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { namespace: ns, name: 'app' },
      spec: { url: s.repoUrl, interval: '10m', ref: { branch: 'main' } },
    } as KubeObject,
    {
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { namespace: ns, name: 'app' },
      spec: {
        interval: '10m',
        prune: true,
        path: './deploy',
        sourceRef: { kind: 'GitRepository', name: 'app' },
      },
    } as KubeObject,
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Receiver',
      metadata: { namespace: ns, name: 'github' },
      spec: {
        type: 'github',
        events: ['push'],
        secretRef: { name: 'webhook-token' },
        resources: [{ apiVersion: SOURCE_API_VERSION, kind: 'GitRepository', name: 'app' }],
      },
    } as KubeObject,
  ];
}
