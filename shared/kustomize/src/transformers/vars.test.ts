import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Resource } from '../resource.ts';
import { expandVars, mergeVars, resolveVars, type Var } from './vars.ts';

const lookup = (values: Record<string, string | number | boolean | object>) => (name: string) =>
  Object.hasOwn(values, name) ? (values[name] as never) : undefined;

describe('expandVars (kustomize refvar DoReplacements)', () => {
  it('substitutes, keeps unknown and unterminated references, and reads $$ as a literal $', () => {
    const l = lookup({ A: 'x', N: 80 });
    assert.equal(expandVars('a=$(A) b=$(B) $$(A) $(A', l), 'a=x b=$(B) $(A) $(A');
    assert.equal(expandVars('port $(N)', l), 'port 80');
    assert.equal(expandVars('$', l), '$');
    assert.equal(expandVars('$x$(A)', l), '$xx');
  });

  it('gives a whole-string reference the value with its type; a map value is left as the reference', () => {
    assert.equal(expandVars('$(N)', lookup({ N: 80 })), 80);
    assert.equal(expandVars('$(B)', lookup({ B: true })), true);
    assert.equal(expandVars('$(M)', lookup({ M: { a: 'b' } })), '$(M)');
  });
});

describe('mergeVars and resolveVars', () => {
  const resources = (): Resource[] => [
    {
      object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'p-db' } },
      previousIds: [{ group: '', version: 'v1', kind: 'Service', name: 'db', namespace: '' }],
    },
    {
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'app' },
        spec: { containers: [{ name: 'c', args: ['--db=$(DB)', '$(DB_PORT)'] }] },
      },
      previousIds: [],
    },
  ];
  const v = (name: string, objName: string, fieldPath = 'metadata.name'): Var => ({
    name,
    objref: { group: '', version: 'v1', kind: 'Service', name: objName, namespace: '' },
    fieldPath,
  });

  it('finds the var by a previous name and substitutes its current value', () => {
    const rs = resources();
    const set = new Map<string, Var>();
    mergeVars(rs, set, [v('DB', 'db')]);
    resolveVars(rs, set, [{ path: 'spec/containers/args', kind: 'Pod' }]);
    const pod = rs[1] as Resource;
    assert.deepEqual((pod.object.spec as { containers: { args: unknown }[] }).containers[0]?.args, [
      '--db=p-db',
      '$(DB_PORT)',
    ]);
  });

  it('refuses a second var of a name and a var that names no resource', () => {
    const rs = resources();
    const set = new Map<string, Var>();
    mergeVars(rs, set, [v('DB', 'db')]);
    assert.throws(() => mergeVars(rs, set, [v('DB', 'p-db')]), /var 'DB' already encountered/);
    const lonely = new Map<string, Var>();
    mergeVars(rs, lonely, [v('X', 'nothing')]);
    assert.throws(() => resolveVars(rs, lonely, []), /cannot be mapped to a field/);
  });
});
