import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applySetters, type PolicyImage, parseMarker } from './setters.ts';

const IMAGES = new Map<string, PolicyImage>([
  ['apps:web', { name: 'reg.example/web', tag: '1.2.0' }],
  ['apps:api', { name: 'reg.example/api', tag: '2.0.0', digest: 'sha256:abcd' }],
]);

const BEFORE = `# Deployments of the app.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # the front end
  namespace: apps
spec:
  template:
    spec:
      containers:
        - name: web
          image: reg.example/web:1.0.0 # {"$imagepolicy": "apps:web"}
        - name: api
          image: "reg.example/api:1.0.0"   # {"$imagepolicy": "apps:api"}
          env: [ {name: A, value: "x"} ]
---
# only a comment
---
kind: Values
metadata: {name: vals}
web:
  repository: 'old.example/web' # {"$imagepolicy": "apps:web:name"}
  tag: 1.0.0 # {"$imagepolicy": "apps:web:tag"}
  digest: none # {"$imagepolicy": "apps:web:digest"}
api:
  digest: "sha256:0000" # {"$imagepolicy": "apps:api:digest"}
  unknown: keep:1 # {"$imagepolicy": "apps:other"}
  below: keep:2
  # {"$imagepolicy": "apps:web"}
  literal: |
    reg.example/web:1.0.0
`;

const AFTER = BEFORE.replace(
  'web:1.0.0 # {"$imagepolicy": "apps:web"}',
  'web:1.2.0 # {"$imagepolicy": "apps:web"}',
)
  .replace('"reg.example/api:1.0.0"', '"reg.example/api:2.0.0@sha256:abcd"')
  .replace("'old.example/web'", "'reg.example/web'")
  .replace('tag: 1.0.0 #', 'tag: 1.2.0 #')
  .replace('"sha256:0000"', '"sha256:abcd"');

describe('applySetters', () => {
  test('rewrites each setter form and leaves every other byte of the file as it was', () => {
    const { text, changes } = applySetters(BEFORE, IMAGES);
    assert.equal(text, AFTER);
    assert.deepEqual(
      changes.map((c) => [c.setter, c.oldValue, c.newValue, c.object?.kind, c.object?.name]),
      [
        ['apps:web', 'reg.example/web:1.0.0', 'reg.example/web:1.2.0', 'Deployment', 'web'],
        ['apps:api', 'reg.example/api:1.0.0', 'reg.example/api:2.0.0@sha256:abcd', 'Deployment', 'web'],
        ['apps:web:name', 'old.example/web', 'reg.example/web', 'Values', 'vals'],
        ['apps:web:tag', '1.0.0', '1.2.0', 'Values', 'vals'],
        ['apps:api:digest', 'sha256:0000', 'sha256:abcd', 'Values', 'vals'],
      ],
    );
    // Line by line: only the five marked lines differ.
    const a = BEFORE.split('\n');
    const b = text.split('\n');
    assert.equal(a.length, b.length);
    assert.equal(a.filter((line, i) => line !== b[i]).length, 5);
  });

  test('applying twice changes nothing the second time', () => {
    const once = applySetters(BEFORE, IMAGES).text;
    const twice = applySetters(once, IMAGES);
    assert.equal(twice.text, once);
    assert.deepEqual(twice.changes, []);
  });

  test('a plain value that would re-type as a number is quoted', () => {
    const src = 'tag: v1 # {"$imagepolicy": "apps:n:tag"}\n';
    const out = applySetters(src, new Map([['apps:n', { name: 'x', tag: '2' }]])).text;
    assert.equal(out, 'tag: "2" # {"$imagepolicy": "apps:n:tag"}\n');
  });

  test('a file without markers is returned untouched; invalid YAML with a marker throws', () => {
    const plain = 'a: [b\n';
    assert.equal(applySetters(plain, IMAGES).text, plain);
    assert.throws(() => applySetters('a: [b # {"$imagepolicy": "apps:web"}\n', IMAGES), /invalid YAML/);
  });
});

test('parseMarker accepts ns:name with an optional tag, name or digest suffix only', () => {
  assert.deepEqual(parseMarker(' {"$imagepolicy": "ns:p"}'), { key: 'ns:p', field: 'full', setter: 'ns:p' });
  assert.deepEqual(parseMarker('{"$imagepolicy":"ns:p:digest"}'), {
    key: 'ns:p',
    field: 'digest',
    setter: 'ns:p:digest',
  });
  for (const bad of [
    '{"$imagepolicy": "p"}',
    '{"$imagepolicy": "ns:p:size"}',
    'plain comment',
    '{"$imagepolicy": 1}',
  ]) {
    assert.equal(parseMarker(bad), undefined, bad);
  }
});
