// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Flux's ${var} syntax is the subject here, not a template mistake.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SubstitutionError, substituteVariables } from './substitute.ts';

const strict = { strict: true, strategy: 'WithVariables' as const };
const cm = (data: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'cm' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata,
  data,
});

test('braced references, defaults and the $$ escape follow Flux', () => {
  const vars = { cluster: 'prod', empty: '', replicas: '3' };
  const cases: [string, unknown][] = [
    ['${cluster}', 'prod'],
    ['name-${cluster}-x', 'name-prod-x'],
    ['$cluster', '$cluster'],
    ['${missing:=fallback}', 'fallback'],
    ['${missing:-fallback}', 'fallback'],
    ['${empty:=fallback}', 'fallback'],
    // Substitution works on YAML text, as Flux's does: an empty unquoted value reads back as null.
    ['${empty=fallback}', null],
    ['${cluster:=fallback}', 'prod'],
    ['$${cluster}', '${cluster}'],
  ];
  for (const [input, want] of cases) {
    const out = substituteVariables(cm({ v: input }), vars, strict, 'ConfigMap/cm');
    assert.equal((out.data as Record<string, unknown>).v, want, input);
  }
});

test('a number substituted into an unquoted field becomes a number', () => {
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: '${replicas}' },
  };
  const out = substituteVariables(deploy, { replicas: '3' }, strict, 'Deployment/d');
  assert.equal((out.spec as { replicas: unknown }).replicas, 3);
});

test('strict mode names the undefined variable; non-strict leaves it empty', () => {
  assert.throws(
    () => substituteVariables(cm({ v: '${nope}' }), { other: 'x' }, strict, 'ConfigMap/cm'),
    (err: Error) => err instanceof SubstitutionError && /variable 'nope' is not set/.test(err.message),
  );
  const out = substituteVariables(
    cm({ v: 'a${nope}b' }),
    { other: 'x' },
    { ...strict, strict: false },
    'ConfigMap/cm',
  );
  assert.equal((out.data as Record<string, string>).v, 'ab');
});

test('WithVariables skips when nothing is defined; Always substitutes defaults anyway', () => {
  const obj = cm({ v: '${x:=d}' });
  assert.equal(substituteVariables(obj, {}, strict, 'c'), obj);
  const out = substituteVariables(obj, {}, { strict: true, strategy: 'Always' }, 'c');
  assert.equal((out.data as Record<string, string>).v, 'd');
});

test('the opt-out marker leaves the object untouched', () => {
  const obj = cm(
    { v: '${x}' },
    { name: 'cm', annotations: { 'kustomize.mooring.dev/substitute': 'disabled' } },
  );
  assert.equal(substituteVariables(obj, { x: '1' }, strict, 'c'), obj);
  const labelled = cm(
    { v: '${x}' },
    { name: 'cm', labels: { 'kustomize.mooring.dev/substitute': 'disabled' } },
  );
  assert.equal(substituteVariables(labelled, { x: '1' }, strict, 'c'), labelled);
});

test('a malformed reference is a clear error', () => {
  assert.throws(
    () => substituteVariables(cm({ v: '${1abc}' }), { a: '1' }, strict, 'ConfigMap/cm'),
    /not a valid variable/,
  );
});
