import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanMetadata, commitFromRevision, dedupeKey, type InboundEvent, parseEvent } from './event.ts';

const base = {
  involvedObject: {
    kind: 'GitRepository',
    namespace: 'apps',
    name: 'app',
    apiVersion: 'source.mooring.dev/v1',
  },
  severity: 'error',
  message: 'clone failed',
  reason: 'GitOperationFailed',
  reportingController: 'mooring-source',
};

test('parseEvent accepts the event contract and names the first bad field otherwise', () => {
  const ok = parseEvent(base) as InboundEvent;
  assert.equal(ok.involvedObject.name, 'app');
  assert.deepEqual(ok.metadata, {});
  const table: [unknown, RegExp][] = [
    [null, /JSON object/],
    [[], /JSON object/],
    [{ ...base, involvedObject: 'x' }, /involvedObject must be an object/],
    [{ ...base, involvedObject: { kind: 'K' } }, /involvedObject\.name/],
    [{ ...base, severity: 'warning' }, /severity/],
    [{ ...base, message: 7 }, /message must be a string/],
    [{ ...base, message: 'x'.repeat(39_001) }, /longer than 39000/],
    [{ ...base, reportingController: '' }, /reportingController/],
    [{ ...base, metadata: { revision: 1 } }, /metadata\.revision must be a string/],
    [{ ...base, metadata: ['a'] }, /metadata must be an object/],
  ];
  for (const [input, want] of table)
    assert.match(parseEvent(input) as string, want, JSON.stringify(input).slice(0, 60));
});

test('cleanMetadata keeps plain and own-group keys, strips prefixes and drops checksum and digest', () => {
  const e = parseEvent({
    ...base,
    metadata: {
      revision: 'main@sha1:abc',
      'source.mooring.dev/originRevision': 'o',
      'source.mooring.dev/digest': 'sha256:x',
      'kustomize.mooring.dev/revision': 'foreign',
      'event.mooring.dev/team': 'web',
      checksum: 'c',
    },
  }) as InboundEvent;
  assert.deepEqual(cleanMetadata(e), { revision: 'main@sha1:abc', originRevision: 'o', team: 'web' });
});

test('dedupeKey changes with the message, revision and token, and nothing else', () => {
  const e = parseEvent(base) as InboundEvent;
  const k = dedupeKey(e, { revision: 'a' });
  assert.equal(dedupeKey({ ...e, timestamp: 'later', reason: 'Other' }, { revision: 'a', other: 'x' }), k);
  assert.notEqual(dedupeKey(e, { revision: 'b' }), k);
  assert.notEqual(dedupeKey(e, { revision: 'a', token: 't' }), k);
  assert.notEqual(dedupeKey({ ...e, message: 'other' }, { revision: 'a' }), k);
});

test('commitFromRevision reads every revision format', () => {
  const sha = 'a'.repeat(40);
  assert.equal(commitFromRevision(`main@sha1:${sha}`), sha);
  assert.equal(commitFromRevision(`sha1:${sha}`), sha);
  assert.equal(commitFromRevision(`main/${sha}`), sha);
  assert.equal(commitFromRevision(`v1.0.0@sha256:${'b'.repeat(64)}`), 'b'.repeat(64));
  assert.equal(commitFromRevision('v1.0.0'), undefined);
  assert.equal(commitFromRevision(undefined), undefined);
});
