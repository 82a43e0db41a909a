import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextLink } from './link-header.ts';

test('finds the rel="next" target among links', () => {
  const cases: [string | string[] | undefined, string | undefined][] = [
    ['</v2/a/tags/list?n=2&last=b>; rel="next"', '/v2/a/tags/list?n=2&last=b'],
    ['<https://x/prev>; rel="prev", </v2/a/tags/list?last=a,b>; rel=next', '/v2/a/tags/list?last=a,b'],
    ['</x>; title="t"; rel="first next"', '/x'],
    [['</p>; rel="prev"', '</n>; rel="next"'], '/n'],
    ['</x>; rel="prev"', undefined],
    ['</x>; rel="nextpage"', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [header, want] of cases) assert.equal(nextLink(header), want, String(header));
});

test('a hostile 16 KiB header is parsed in linear time', () => {
  // CPU time of this process, not wall-clock time: other processes on a loaded machine do not
  // count. Parsing takes well under a millisecond; a backtracking regex takes many seconds here.
  const before = process.cpuUsage();
  assert.equal(nextLink(`<x>; rel="${' '.repeat(16_000)}`), undefined);
  assert.equal(nextLink(`<x>${'; a'.repeat(5000)}`), undefined);
  const { user, system } = process.cpuUsage(before);
  const cpuMs = (user + system) / 1000;
  assert.ok(cpuMs < 1000, `parsing took ${cpuMs} ms of CPU`);
});
