import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Artifact, WEBHOOK_ACCEPTED_AT_ANNOTATION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { pushToAppliedSeconds } from './push-latency.ts';

const source = (accepted: string | undefined, interval = '1m'): KubeObject =>
  ({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: {
      name: 'platform',
      namespace: 'apps',
      annotations: accepted ? { [WEBHOOK_ACCEPTED_AT_ANNOTATION]: accepted } : {},
    },
    spec: { interval },
  }) as KubeObject;

const artifact = (lastUpdateTime: string): Artifact =>
  ({ revision: 'main@sha1:1', digest: 'sha256:0', path: 'p', url: 'u', lastUpdateTime }) as Artifact;

const APPLIED = new Date('2026-01-01T00:00:12.500Z');

describe('pushToAppliedSeconds', () => {
  const cases: { what: string; src: KubeObject; stored: string; want: number | undefined }[] = [
    {
      what: "the webhook's fetch stored the artifact: from acceptance to applied",
      src: source('2026-01-01T00:00:02.500Z'),
      stored: '2026-01-01T00:00:05Z',
      want: 10,
    },
    {
      what: 'stored in the same second as the webhook, with a whole-second lastUpdateTime',
      src: source('2026-01-01T00:00:02.500Z'),
      stored: '2026-01-01T00:00:02Z',
      want: 10,
    },
    {
      what: 'an artifact older than the webhook: its fetch found nothing new',
      src: source('2026-01-01T00:00:02.500Z'),
      stored: '2026-01-01T00:00:01Z',
      want: undefined,
    },
    {
      what: 'an artifact a later interval fetch stored: not the webhook’s',
      src: source('2025-12-31T23:00:00Z', '1m'),
      stored: '2026-01-01T00:00:05Z',
      want: undefined,
    },
    {
      what: 'no webhook ever',
      src: source(undefined),
      stored: '2026-01-01T00:00:05Z',
      want: undefined,
    },
    {
      what: 'an annotation that is not a time',
      src: source('yesterday'),
      stored: '2026-01-01T00:00:05Z',
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.what, () => assert.equal(pushToAppliedSeconds(c.src, artifact(c.stored), APPLIED), c.want));
  }
});
