import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defaultConfig,
  emptyConfig,
  mergeConfig,
  mergeOneFieldSpec,
  parseTransformerConfig,
} from './config.ts';

describe('transformer configurations (kustomize builtinconfig)', () => {
  it('drops an incoming spec that a present one of its path is selected by, not the other way round', () => {
    const generic = { path: 'metadata/name' };
    const narrow = { path: 'metadata/name', kind: 'Deployment' };
    assert.deepEqual(mergeOneFieldSpec([narrow], generic), [narrow]);
    assert.deepEqual(mergeOneFieldSpec([generic], narrow), [generic, narrow]);
    assert.throws(
      () => mergeOneFieldSpec([{ path: 'a', create: true }], { path: 'a' }),
      /conflicting fieldspecs/,
    );
  });

  it('sorts after a merge, so a narrow spec then hides the generic one at the next merge', () => {
    const custom = parseTransformerConfig(
      'namePrefix:\n- path: metadata/name\n  kind: Deployment\n',
      'c.yaml',
    );
    const own = mergeConfig(defaultConfig(), custom);
    assert.deepEqual(own.namePrefix, [
      { path: 'metadata/name', kind: 'Deployment' },
      { path: 'metadata/name' },
    ]);
    assert.deepEqual(mergeConfig(emptyConfig(), own).namePrefix, [
      { path: 'metadata/name', kind: 'Deployment' },
    ]);
  });

  it('merges nameReference rows of the same GVK and appends new ones', () => {
    const custom = parseTransformerConfig(
      'nameReference:\n- kind: ConfigMap\n  version: v1\n  fieldSpecs:\n  - {kind: App, path: spec/config}\n- kind: Gorilla\n  fieldSpecs:\n  - {kind: Zoo, path: spec/gorilla}\n',
      'c.yaml',
    );
    const merged = mergeConfig(defaultConfig(), custom);
    const configMap = merged.nameReference.find((r) => r.target.kind === 'ConfigMap');
    assert.ok(configMap?.referrers.some((s) => s.kind === 'App' && s.path === 'spec/config'));
    assert.deepEqual(merged.nameReference.at(-1), {
      target: { kind: 'Gorilla' },
      referrers: [{ kind: 'Zoo', path: 'spec/gorilla' }],
    });
  });

  it('reads keys case-insensitively and refuses unknown ones, as Go decodes it', () => {
    assert.deepEqual(parseTransformerConfig('VarReference:\n- {Path: spec/x, Kind: A}\n', 'c').varReference, [
      { path: 'spec/x', kind: 'A' },
    ]);
    assert.throws(
      () => parseTransformerConfig('nameReferences: []\n', 'c'),
      /unknown field "nameReferences"/,
    );
  });
});
