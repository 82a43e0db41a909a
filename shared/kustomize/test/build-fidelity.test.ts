import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { build, createConfinedFs, toYAML } from '../src/index.ts';

// Expected outputs were produced by the Go kustomize v5.8.0 binary (`kustomize build <dir>`).

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Writes the files into a fresh temp dir and renders its kustomization. */
async function render(files: Record<string, string>): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'mooring-kustomize-fidelity-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return toYAML(await build(createConfinedFs(root), '.'));
}

describe('build output matches kustomize v5.8.0', () => {
  it('turns annotations a replacement or JSON patch wrote as numbers, booleans or null into strings', async () => {
    const yaml = await render({
      'kustomization.yaml': `resources: [r.yaml]
replacements:
- source: {kind: Service, fieldPath: spec.ports.0.port}
  targets:
  - select: {kind: ConfigMap}
    fieldPaths: [metadata.annotations.port]
    options: {create: true}
patches:
- target: {kind: Service}
  patch: |-
    - op: add
      path: /metadata/annotations
      value: {a: 1, b: true, c: 1.5, d: null}
`,
      'r.yaml':
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    });
    assert.equal(
      yaml,
      `apiVersion: v1
kind: ConfigMap
metadata:
  annotations:
    port: "8080"
  name: c
---
apiVersion: v1
kind: Service
metadata:
  annotations:
    a: "1"
    b: "true"
    c: "1.5"
    d: "null"
  name: s
spec:
  ports:
  - port: 8080
`,
    );
  });

  it('reads a JSON 6902 patch as YAML 1.1: y and on are booleans, 0755 is octal, n is false', async () => {
    const yaml = await render({
      'kustomization.yaml': `resources: [r.yaml]
patches:
- target: {kind: ConfigMap}
  patch: |-
    - {op: add, path: /data/x, value: y}
    - {op: add, path: /data/z, value: on}
    - {op: add, path: /data/o, value: 0755}
    - op: add
      path: /metadata/labels
      value: {n: "1"}
`,
      'r.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n',
    });
    assert.equal(
      yaml,
      'apiVersion: v1\ndata:\n  a: b\n  o: 493\n  x: true\n  z: true\nkind: ConfigMap\nmetadata:\n  labels:\n    "false": "1"\n  name: c\n',
    );
  });

  it('copies $retainKeys, $setElementOrder and $deleteFromPrimitiveList through unapplied', async () => {
    const yaml = await render({
      'kustomization.yaml': `resources: [pod.yaml]
patches:
- patch: |-
    apiVersion: v1
    kind: Pod
    metadata:
      name: p
      $deleteFromPrimitiveList/finalizers: [b]
    spec:
      $setElementOrder/containers: [{name: c}, {name: a}]
      containers:
      - {name: c, image: c}
      volumes:
      - name: v
        $retainKeys: [name, secret]
        secret: {secretName: s}
`,
      'pod.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: p
  finalizers: [a, b]
spec:
  containers:
  - {name: a, image: a}
  volumes:
  - {name: v, configMap: {name: cm}}
`,
    });
    assert.equal(
      yaml,
      `apiVersion: v1
kind: Pod
metadata:
  $deleteFromPrimitiveList/finalizers:
  - b
  finalizers:
  - a
  - b
  name: p
spec:
  $setElementOrder/containers:
  - name: c
  - name: a
  containers:
  - image: c
    name: c
  - image: a
    name: a
  volumes:
  - $retainKeys:
    - name
    - secret
    configMap:
      name: cm
    name: v
    secret:
      secretName: s
`,
    );
  });

  it('prints integers beyond 2^53 exactly, through a strategic merge patch', async () => {
    const yaml = await render({
      'kustomization.yaml': `resources: [r.yaml]
patches:
- patch: |-
    apiVersion: example.com/v1
    kind: Settings
    metadata:
      name: s
    spec:
      replicas: 2
`,
      'r.yaml': `apiVersion: example.com/v1
kind: Settings
metadata:
  name: s
spec:
  big: 12345678901234567890
  hex: 0x7FFFFFFFFFFFFFFF
  negative: -9007199254740993
  list:
  - 9007199254740993
  - 1_000_000_000_000_000_001
  small: 9007199254740991
`,
    });
    assert.equal(
      yaml,
      `apiVersion: example.com/v1
kind: Settings
metadata:
  name: s
spec:
  big: 12345678901234567890
  hex: 9223372036854775807
  list:
  - 9007199254740993
  - 1000000000000000001
  negative: -9007199254740993
  replicas: 2
  small: 9007199254740991
`,
    );
  });
});
