import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONSchemaProps } from './crd.ts';
import { structuralErrors } from './structural.ts';

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({
  type: 'object',
  properties: { metadata: { type: 'object' }, spec },
});

describe('structuralErrors', () => {
  test('accepts a structural schema', () => {
    const spec = {
      type: 'object',
      properties: {
        name: { type: 'string', enum: ['a', 'b'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
        raw: { 'x-kubernetes-preserve-unknown-fields': true },
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] },
        },
      },
      required: ['name'],
      'x-kubernetes-validations': [{ rule: 'has(self.name)', message: 'name' }],
    };
    assert.deepEqual(structuralErrors(root(spec)), []);
  });

  const bad: [string, JSONSchemaProps, string][] = [
    ['a missing type', { properties: { a: { type: 'string' } } }, '.spec: type is missing'],
    ['a $ref', { type: 'object', properties: { a: { $ref: '#/x' } } }, '.spec.a: $ref is not allowed'],
    [
      'a TypeBox union',
      { type: 'object', properties: { a: { anyOf: [{ const: 'x' }] } } },
      '.spec.a: anyOf is not allowed',
    ],
    ['a const', { type: 'string', const: 'x' }, '.spec: const is not allowed'],
    [
      'patternProperties',
      { type: 'object', patternProperties: { '^.*$': { type: 'string' } } },
      'patternProperties',
    ],
    [
      'additionalProperties: false',
      { type: 'object', additionalProperties: false },
      'additionalProperties: false',
    ],
    [
      'properties beside additionalProperties',
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
      'mutually exclusive',
    ],
    [
      'properties on a string',
      { type: 'string', properties: { a: { type: 'string' } } },
      'properties need type: object',
    ],
    ['an array without items', { type: 'array' }, 'needs one items schema'],
    ['a tuple', { type: 'array', items: [{ type: 'string' }] }, 'needs one items schema'],
    ['a union type', { type: ['string', 'null'] }, 'not a single known type'],
    ['an enum of the wrong type', { type: 'integer', enum: ['1'] }, 'enum value "1" is not a integer'],
    ['required but undeclared', { type: 'object', properties: {}, required: ['a'] }, 'required field a'],
    [
      'a list map keyed by an optional field',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        items: { type: 'object', properties: { type: { type: 'string' } } },
      },
      'must be required or defaulted',
    ],
    [
      'a CEL rule without rule',
      { type: 'object', 'x-kubernetes-validations': [{ message: 'm' }] },
      'x-kubernetes-validations',
    ],
  ];
  for (const [name, spec, message] of bad) {
    test(`reports ${name}`, () => {
      const errors = structuralErrors(root(spec));
      assert.ok(
        errors.some((e) => e.includes(message)),
        `expected "${message}" in ${JSON.stringify(errors)}`,
      );
    });
  }

  test('reports a metadata schema beyond type: object', () => {
    const schema = {
      type: 'object',
      properties: { metadata: { type: 'object', properties: { name: { type: 'string' } } } },
    };
    assert.ok(structuralErrors(schema).some((e) => e.startsWith('.metadata')));
  });
});
