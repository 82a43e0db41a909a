import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ActionFacts, decideAction, forceRequest } from './decide-action.ts';

const base: ActionFacts = {
  deployed: true,
  upToDate: false,
  desiredChanged: false,
  failures: { install: 0, upgrade: 0 },
  retries: { install: 0, upgrade: 0 },
  forced: false,
  rollback: false,
};

test('the action and the retries gate, with force and rollback passing it', () => {
  const cases: [string, Partial<ActionFacts>, string][] = [
    ['nothing new', { upToDate: true }, 'none'],
    ['nothing new but forced: one more upgrade', { upToDate: true, forced: true }, 'upgrade'],
    ['no release yet', { deployed: false }, 'install'],
    ['no release yet, forced', { deployed: false, forced: true }, 'install'],
    ['a new chart or values', { desiredChanged: true, failures: { install: 0, upgrade: 3 } }, 'upgrade'],
    ['one failure, retries 0: exhausted', { failures: { install: 0, upgrade: 1 } }, 'upgrade exhausted'],
    [
      'one failure, retries 1: retried',
      { failures: { install: 0, upgrade: 1 }, retries: { install: 0, upgrade: 1 } },
      'upgrade',
    ],
    [
      'retries -1 never run out',
      { failures: { install: 0, upgrade: 9 }, retries: { install: 0, upgrade: -1 } },
      'upgrade',
    ],
    [
      'install failures count for an install',
      { deployed: false, failures: { install: 1, upgrade: 0 } },
      'install exhausted',
    ],
    ['exhausted but forced', { failures: { install: 0, upgrade: 4 }, forced: true }, 'upgrade'],
    [
      'exhausted but a rollback asked or held',
      { failures: { install: 0, upgrade: 4 }, rollback: true },
      'upgrade',
    ],
  ];
  for (const [name, facts, want] of cases) {
    const got = decideAction({ ...base, ...facts });
    assert.equal(`${got.action}${got.exhausted ? ' exhausted' : ''}`, want, name);
  }
});

test('a force is handled once, and only with the same requestedAt, as Flux requires', () => {
  const both = (v: string) => ({
    'reconcile.mooring.dev/forceAt': v,
    'reconcile.mooring.dev/requestedAt': v,
  });
  assert.equal(forceRequest(both('t1'), undefined), 't1');
  assert.equal(forceRequest(both('t1'), 't1'), undefined, 'already handled');
  assert.equal(forceRequest(both('t2'), 't1'), 't2');
  assert.equal(
    forceRequest({ 'reconcile.mooring.dev/forceAt': 't3', 'reconcile.mooring.dev/requestedAt': 't2' }, 't1'),
    undefined,
    'a stale forceAt left beside a newer requestedAt',
  );
  assert.equal(forceRequest(undefined, undefined), undefined);
});
