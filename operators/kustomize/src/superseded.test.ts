import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunsInFlight, Superseded, supersedes } from './superseded.ts';

test('a newer generation or another source revision supersedes a run; the same, an older one or none yet does not', () => {
  const on = (generation: number | undefined, revision: string | undefined) => ({
    generation,
    revision: () => revision,
  });
  const cases: [ReturnType<typeof on>, Parameters<typeof supersedes>[1], string | undefined][] = [
    [on(3, 'main@sha1:a'), { generation: 4 }, 'generation 4'],
    [on(3, 'main@sha1:a'), { generation: 3 }, undefined],
    [on(3, 'main@sha1:a'), { generation: 2 }, undefined],
    [on(3, 'main@sha1:a'), { revision: 'main@sha1:b' }, "revision 'main@sha1:b'"],
    [on(3, 'main@sha1:a'), { revision: 'main@sha1:a' }, undefined],
    // The run has not resolved its source yet: it will read the new revision itself.
    [on(3, undefined), { revision: 'main@sha1:b' }, undefined],
    [on(undefined, 'main@sha1:a'), { generation: 9 }, undefined],
  ];
  for (const [subject, news, want] of cases)
    assert.equal(supersedes(subject, news), want, JSON.stringify(news));
});

test('the run in flight is aborted with a Superseded reason; a finished run is forgotten', () => {
  const runs = new RunsInFlight();
  const first = runs.begin('apps/web', { generation: 1, revision: () => 'main@sha1:a' });
  runs.supersede('apps/web', { revision: 'main@sha1:a' });
  assert.equal(first.signal.aborted, false);
  runs.supersede('apps/other', { revision: 'main@sha1:b' });
  assert.equal(first.signal.aborted, false);
  runs.supersede('apps/web', { revision: 'main@sha1:b' });
  assert.equal(first.signal.aborted, true);
  assert.ok(first.signal.reason instanceof Superseded);
  assert.equal((first.signal.reason as Superseded).message, "revision 'main@sha1:b'");
  first.end();

  const second = runs.begin('apps/web', { generation: 2, revision: () => 'main@sha1:b' });
  first.end(); // a late end of the old run leaves the new one registered
  runs.supersede('apps/web', { generation: 3 });
  assert.equal(second.signal.aborted, true);
});
