import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Alert } from '@mooring/api';
import { matchAlert } from './alert-matcher.ts';
import type { InboundEvent } from './event.ts';

const event: InboundEvent = {
  involvedObject: { kind: 'Kustomization', namespace: 'apps', name: 'web' },
  severity: 'info',
  timestamp: '2026-01-01T00:00:00Z',
  message: 'Applied revision main@sha1:abc',
  reason: 'ReconciliationSucceeded',
  metadata: { revision: 'main@sha1:abc', summary: 'from-event' },
  reportingController: 'mooring-kustomize',
};

const alert = (spec: Partial<Alert['spec']>, namespace = 'apps'): Alert => ({
  apiVersion: 'notification.mooring.dev/v1',
  kind: 'Alert',
  metadata: { name: 'a', namespace },
  spec: { providerRef: { name: 'p' }, eventSources: [{ kind: 'Kustomization', name: '*' }], ...spec },
});

const opts = { noCrossNamespaceRefs: false };

test('matching follows Flux: kind, namespace, name or *, labels, severity, inclusion then exclusion', () => {
  const rows: [string, Alert, InboundEvent, boolean, Record<string, string>?][] = [
    ['wildcard name', alert({}), event, true],
    ['exact name', alert({ eventSources: [{ kind: 'Kustomization', name: 'web' }] }), event, true],
    ['other name', alert({ eventSources: [{ kind: 'Kustomization', name: 'api' }] }), event, false],
    ['other kind', alert({ eventSources: [{ kind: 'GitRepository', name: '*' }] }), event, false],
    ['source namespace defaults to the Alert’s', alert({}, 'other'), event, false],
    [
      'explicit source namespace',
      alert({ eventSources: [{ kind: 'Kustomization', name: '*', namespace: 'apps' }] }, 'other'),
      event,
      true,
    ],
    ['error-only Alert drops info', alert({ eventSeverity: 'error' }), event, false],
    [
      'error-only Alert takes errors',
      alert({ eventSeverity: 'error' }),
      { ...event, severity: 'error' },
      true,
    ],
    ['suspended', alert({ suspend: true }), event, false],
    ['inclusion matches', alert({ inclusionList: ['^Applied'] }), event, true],
    ['inclusion misses', alert({ inclusionList: ['^Failed'] }), event, false],
    ['exclusion matches', alert({ exclusionList: ['sha1:abc$'] }), event, false],
    [
      'labels match',
      alert({ eventSources: [{ kind: 'Kustomization', name: '*', matchLabels: { team: 'web' } }] }),
      event,
      true,
      { team: 'web' },
    ],
    [
      'labels differ',
      alert({ eventSources: [{ kind: 'Kustomization', name: '*', matchLabels: { team: 'web' } }] }),
      event,
      false,
      { team: 'db' },
    ],
  ];
  for (const [name, a, e, want, labels] of rows) {
    assert.equal(matchAlert(e, a, { ...opts, labels }).matched, want, name);
  }
});

test('--no-cross-namespace-refs discards events from other namespaces', () => {
  const a = alert({ eventSources: [{ kind: 'Kustomization', name: '*', namespace: 'apps' }] }, 'other');
  assert.equal(matchAlert(event, a, { noCrossNamespaceRefs: true }).matched, false);
});

test('an invalid pattern is reported, not thrown', () => {
  const r = matchAlert(event, alert({ inclusionList: ['ok', '[z-a]'] }), opts);
  assert.deepEqual(r, {
    matched: false,
    invalid: 'inclusionList[1] "[z-a]" is not a valid regular expression',
  });
});

test('metadata: eventMetadata < summary < the event’s own keys', () => {
  const r = matchAlert(
    { ...event, metadata: { revision: 'r' } },
    alert({
      eventMetadata: { env: 'prod', revision: 'overridden', summary: 'x' },
      summary: 'Cluster addons',
    }),
    opts,
  );
  assert.deepEqual(r, { matched: true, metadata: { env: 'prod', revision: 'r', summary: 'Cluster addons' } });
});
