import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maskSecrets } from './secret-mask.ts';

test('maskSecrets hides every value and marks changed keys differently on each side', () => {
  const live = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data: { same: 'YQ==', changed: 'Yg==', gone: 'Yw==' },
  };
  const next = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data: { same: 'YQ==', changed: 'ZA==', added: 'ZQ==' },
  };
  maskSecrets(live, next);
  assert.deepEqual(live.data, { same: '***', changed: '*** (before)', gone: '*** (before)' });
  assert.deepEqual(next.data, { same: '***', changed: '*** (after)', added: '*** (after)' });
});

test('maskSecrets leaves other kinds alone', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'v' } };
  maskSecrets(cm, structuredClone(cm));
  assert.deepEqual(cm.data, { k: 'v' });
});
