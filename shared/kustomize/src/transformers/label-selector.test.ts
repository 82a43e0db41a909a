import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesSelector, parseSelector } from './label-selector.ts';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', weight: '5' };
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (db, web)', true],
    ['app notin (db,web)', false],
    ['missing notin (a)', true],
    ['tier', true],
    ['!tier', false],
    ['!missing', true],
    ['app=web,tier=front', true],
    ['app=web, tier=back', false],
    ['weight>3', true],
    ['weight<3', false],
  ];
  for (const [selector, want] of cases) {
    it(`'${selector}' → ${want}`, () => assert.equal(matchesSelector(parseSelector(selector), labels), want));
  }

  it('refuses a selector it cannot read', () => {
    assert.throws(() => parseSelector('app=(web'), /Label selector 'app=\(web' cannot be parsed/);
    assert.throws(() => parseSelector('app=web,'), /empty requirement/);
  });
});
