import {
  FormatRegistry,
  Kind,
  type Static,
  type TSchema,
  type TUnsafe,
  Type,
  TypeRegistry,
} from '@sinclair/typebox';
import { GetErrorFunction, SetErrorFunction } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

// TypeBox's own enum and record types emit `anyOf`/`const` and `patternProperties`, which a
// Kubernetes structural schema does not allow, so enums and maps are custom kinds that emit
// `{type: string, enum}` and `{type: object, additionalProperties}` and still type-check and validate.
const STRING_ENUM = 'MooringStringEnum';
const MAP = 'MooringMap';
const FREE_OBJECT = 'MooringFreeObject';
const INT_OR_STRING = 'MooringIntOrString';

TypeRegistry.Set<{ enum: readonly string[] }>(
  STRING_ENUM,
  (schema, value) => typeof value === 'string' && schema.enum.includes(value),
);
TypeRegistry.Set<{ additionalProperties: TSchema }>(
  MAP,
  (schema, value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => Value.Check(schema.additionalProperties, v)),
);

TypeRegistry.Set(
  FREE_OBJECT,
  (_schema, value) => typeof value === 'object' && value !== null && !Array.isArray(value),
);

TypeRegistry.Set(
  INT_OR_STRING,
  (_schema, value) => (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'string',
);

// Say what was expected instead of TypeBox's "Expected kind 'MooringStringEnum'"; other messages are untouched.
const fallbackErrorFunction = GetErrorFunction();
SetErrorFunction((error) => {
  if (error.schema[Kind] === STRING_ENUM)
    return `Expected one of ${(error.schema.enum as string[]).join(', ')}`;
  if (error.schema[Kind] === MAP) return 'Expected a map of valid values';
  if (error.schema[Kind] === FREE_OBJECT) return 'Expected an object';
  if (error.schema[Kind] === INT_OR_STRING) return 'Expected an integer or a string';
  return fallbackErrorFunction(error);
});

// RFC 3339 as Kubernetes serialises metav1.Time; TypeBox refuses unknown formats.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
FormatRegistry.Set('date-time', (value) => RFC3339.test(value) && !Number.isNaN(Date.parse(value)));

/** A CEL rule attached to a schema node (`x-kubernetes-validations`). */
export interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Options accepted by every helper: any JSON-schema or Kubernetes extension keyword. */
export type SchemaOptions = Record<string, unknown> & { description?: string };

/** A string restricted to `values`, emitted as `{type: string, enum}`. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: STRING_ENUM, type: 'string', enum: [...values] });
}

/** A map from string keys to `value`, emitted as `{type: object, additionalProperties: value}`. */
export function MapOf<T extends TSchema>(
  value: T,
  options: SchemaOptions = {},
): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({
    ...options,
    [Kind]: MAP,
    type: 'object',
    additionalProperties: value,
  });
}

/** An object of any shape the API server keeps as given (Helm values), `x-kubernetes-preserve-unknown-fields`. */
export function FreeObject(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    ...options,
    [Kind]: FREE_OBJECT,
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/** A map of strings, as Kubernetes labels, annotations and Flux's free-form string maps. */
export function StringMap(options: SchemaOptions = {}): TUnsafe<Record<string, string>> {
  return MapOf(Type.String(), options);
}

/** An integer or a string (intstr.IntOrString), `x-kubernetes-int-or-string`; CEL rules narrow it. */
export function IntOrString(options: SchemaOptions = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    ...options,
    [Kind]: INT_OR_STRING,
    'x-kubernetes-int-or-string': true,
  });
}

/** An RFC 3339 timestamp string (metav1.Time). */
export function DateTime(options: SchemaOptions = {}) {
  return Type.String({ ...options, format: 'date-time' });
}

/** A 64-bit integer, as Kubernetes int64 fields. */
export function Int64(options: SchemaOptions = {}) {
  return Type.Integer({ ...options, format: 'int64' });
}

/** A copy of `schema` with its own description, so shared types can be documented per field. */
export function withDescription<T extends TSchema>(schema: T, description: string): T {
  // A shallow copy keeps TypeBox's symbol keys; CloneType would let the old description win.
  return { ...schema, description };
}

/** The options object that attaches CEL rules to a schema node. */
export function cel(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}
