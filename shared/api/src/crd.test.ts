import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  DURATION_MAX_LENGTH,
  DURATION_PATTERN,
  durationRule,
  INTERVAL_BOUNDS,
  TIMEOUT_BOUNDS,
  TIMEOUT_PATTERN,
} from './common.ts';
import { crdFileName, crdFor, crds, type JSONSchemaProps, renderCrdFiles, toYAML } from './crd.ts';
import { KINDS } from './kinds.ts';
import { structuralErrors } from './structural.ts';

const schemaOf = (kind: string): JSONSchemaProps => {
  const crd = crds().find((c) => c.spec.names.kind === kind);
  assert.ok(crd, `no CRD for ${kind}`);
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
};

function child(node: JSONSchemaProps, ...path: string[]): JSONSchemaProps {
  return path.reduce((n, key) => (n.properties as Record<string, JSONSchemaProps>)[key]!, node);
}

/** Every property in a schema, with its dotted path. */
function* properties(node: JSONSchemaProps, path = ''): Generator<[string, JSONSchemaProps]> {
  for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, JSONSchemaProps>)) {
    yield [`${path}.${name}`, prop];
    yield* properties(prop, `${path}.${name}`);
  }
  if (typeof node.items === 'object') yield* properties(node.items as JSONSchemaProps, `${path}[*]`);
  if (typeof node.additionalProperties === 'object') {
    yield* properties(node.additionalProperties as JSONSchemaProps, `${path}[*]`);
  }
}

describe('generated CRDs', () => {
  for (const crd of crds()) {
    const name = crd.metadata.name;
    const version = crd.spec.versions[0]!;
    const schema = version.schema.openAPIV3Schema;

    describe(name, () => {
      test('is a structural schema', () => {
        assert.deepEqual(structuralErrors(schema), []);
      });

      test('is named <plural>.<group>, namespaced, in the mooring category', () => {
        assert.equal(name, `${crd.spec.names.plural}.${crd.spec.group}`);
        assert.equal(crd.spec.scope, 'Namespaced');
        assert.deepEqual(crd.spec.names.categories, ['mooring']);
        assert.equal(crd.spec.versions.length, 1);
        // Every kind at v1 but HelmRelease, which keeps Flux helm-controller's v2.
        assert.equal(version.name, crd.spec.names.kind === 'HelmRelease' ? 'v2' : 'v1');
        assert.ok(version.served && version.storage);
      });

      test('has a status subresource defaulting observedGeneration to -1', () => {
        assert.deepEqual(version.subresources, { status: {} });
        const status = child(schema, 'status');
        assert.deepEqual(status.default, { observedGeneration: -1 });
        assert.equal(child(status, 'observedGeneration').default, -1);
      });

      test('keys conditions by type', () => {
        const conditions = child(schema, 'status', 'conditions');
        assert.equal(conditions['x-kubernetes-list-type'], 'map');
        assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
      });

      test('prints Ready, Status and Age', () => {
        const columns = new Map(version.additionalPrinterColumns.map((c) => [c.name, c]));
        assert.equal(columns.get('Ready')?.jsonPath, '.status.conditions[?(@.type=="Ready")].status');
        assert.equal(columns.get('Status')?.jsonPath, '.status.conditions[?(@.type=="Ready")].message');
        assert.equal(columns.get('Age')?.jsonPath, '.metadata.creationTimestamp');
        assert.equal(columns.get('Age')?.type, 'date');
      });

      test('validates every interval and timeout as a duration', () => {
        for (const [path, prop] of properties(child(schema, 'spec'))) {
          if (!/\.(interval|timeout|retryInterval)$/.test(path)) continue;
          assert.ok(
            prop.pattern === DURATION_PATTERN || prop.pattern === TIMEOUT_PATTERN,
            `.spec${path} has pattern ${String(prop.pattern)}`,
          );
        }
      });

      test('interval abuse: bounds every interval and timeout with a CEL rule naming the field', () => {
        for (const [path, prop] of properties(child(schema, 'spec'))) {
          const field = /\.(interval|timeout|retryInterval)$/.exec(path)?.[1];
          if (!field) continue;
          const bounds = field === 'timeout' ? TIMEOUT_BOUNDS : INTERVAL_BOUNDS;
          assert.equal(prop.maxLength, DURATION_MAX_LENGTH, `.spec${path}`);
          assert.deepEqual(
            prop['x-kubernetes-validations'],
            [durationRule(field, bounds, prop.pattern === DURATION_PATTERN)],
            `.spec${path}`,
          );
        }
      });

      test('carries no TypeBox or JSON Schema identifiers', () => {
        const json = JSON.stringify(crd);
        for (const keyword of ['"$id"', '"$schema"', '"$ref"', '"const"'])
          assert.ok(!json.includes(keyword), keyword);
      });
    });
  }
});

describe('revision columns', () => {
  const revisionPaths: [string, string][] = [
    ['GitRepository', '.status.artifact.revision'],
    ['OCIRepository', '.status.artifact.revision'],
    ['Kustomization', '.status.lastAppliedRevision'],
    ['ImagePolicy', '.status.latestRef.tag'],
  ];
  for (const [kind, jsonPath] of revisionPaths) {
    test(`${kind} prints ${jsonPath}`, () => {
      const crd = crds().find((c) => c.spec.names.kind === kind)!;
      assert.ok(crd.spec.versions[0]!.additionalPrinterColumns.some((c) => c.jsonPath === jsonPath));
    });
  }
});

describe('Flux short names', () => {
  for (const [kind, shortName] of [
    ['GitRepository', 'gitrepo'],
    ['OCIRepository', 'ocirepo'],
    ['Kustomization', 'ks'],
  ]) {
    test(`${kind} is ${shortName}`, () => {
      assert.ok(crdFor(KINDS.find((k) => k.kind === kind)!).spec.names.shortNames?.includes(shortName!));
    });
  }
});

describe('interval abuse: duration bounds', () => {
  test('the bounds parse to their milliseconds and fit one Node timer', () => {
    const ms = (text: string) =>
      Number(/^([0-9]+)(s|h)$/.exec(text)![1]) * (text.endsWith('h') ? 3_600_000 : 1_000);
    for (const bounds of [INTERVAL_BOUNDS, TIMEOUT_BOUNDS]) {
      assert.equal(ms(bounds.min), bounds.minMs);
      assert.equal(ms(bounds.max), bounds.maxMs);
      assert.ok(bounds.minMs > 0 && bounds.maxMs <= 2 ** 31 - 1);
    }
  });

  test('messages name the field and the range, in minutes where hours are not accepted', () => {
    assert.equal(
      durationRule('interval', INTERVAL_BOUNDS).message,
      'interval must be at least 1s and at most 168h',
    );
    assert.equal(
      durationRule('timeout', TIMEOUT_BOUNDS, false).message,
      'timeout must be at least 1s and at most 1440m',
    );
    assert.match(durationRule('timeout', TIMEOUT_BOUNDS, false).rule, /\(ms\|s\|m\)\)\+\$'\)/);
  });
});

describe('CEL rules', () => {
  test('every kind lists the rules of its schema, each with a message', () => {
    for (const def of KINDS) {
      for (const rule of def.celRules) {
        assert.ok(rule.rule.length > 0 && rule.message.length > 0, `${def.kind}${rule.path}`);
      }
    }
  });

  const expected: [string, string][] = [
    ['GitRepository', '.spec'],
    ['OCIRepository', '.spec.ref'],
    ['Kustomization', '.spec.kubeConfig'],
    ['Provider', '.spec'],
    ['Receiver', '.spec'],
    ['Receiver', '.spec.resources[*]'],
    ['ImagePolicy', '.spec'],
    ['ImagePolicy', '.spec.policy'],
  ];
  for (const [kind, path] of expected) {
    test(`${kind} has a rule at ${path}`, () => {
      assert.ok(KINDS.find((k) => k.kind === kind)!.celRules.some((r) => r.path === path));
    });
  }

  test('rules are emitted as x-kubernetes-validations', () => {
    assert.ok(Array.isArray(child(schemaOf('ImagePolicy'), 'spec', 'policy')['x-kubernetes-validations']));
  });
});

describe('YAML output', () => {
  test('parses back to the same CRD', () => {
    for (const crd of crds()) assert.deepEqual(parse(toYAML(crd)), JSON.parse(JSON.stringify(crd)));
  });

  test('is identical across renders', () => {
    assert.deepEqual(renderCrdFiles(), renderCrdFiles());
  });

  test('quotes scalars a YAML 1.1 parser would retype', () => {
    assert.match(
      toYAML({ status: ['True', 'False'], mode: '0755', on: 'yes' }),
      /"True"[\s\S]*"False"[\s\S]*"0755"[\s\S]*"yes"/,
    );
  });

  test('names one file per CRD, <group>_<plural>.yaml', () => {
    assert.deepEqual([...renderCrdFiles().keys()], KINDS.map(crdFileName).sort());
    assert.equal(crdFileName(KINDS[0]!), 'source.mooring.dev_gitrepositories.yaml');
  });
});
