// RFC 6902 JSON Patch, written by hand: fast-json-patch, the usual npm choice, has been unmaintained
// since about 2022, and the whole algorithm is a hundred lines over plain JSON values.
// Where kustomize's library (gopkg.in/evanphx/json-patch.v4) is laxer than the RFC, this follows
// kustomize: negative array indices count from the end, indices parse like Go's strconv.Atoi
// ('01' is 1), `replace` of a missing map key adds it, `test` of a missing map key against null
// passes, and unknown '~' escapes are left as they are.
import { isDeepStrictEqual } from 'node:util';
import { KustomizeError } from '../errors.ts';
import type { JsonObject, JsonValue } from '../resource.ts';

type Container = JsonObject | JsonValue[];

class PatchStepError extends Error {}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Splits a JSON pointer (RFC 6901) into unescaped tokens; '' is the whole document. */
function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchStepError(`pointer '${pointer}' must start with '/'`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(array: JsonValue[], token: string, allowEnd: boolean): number {
  if (allowEnd && token === '-') return array.length;
  if (!/^[+-]?[0-9]+$/.test(token)) throw new PatchStepError(`'${token}' is not an array index`);
  const size = allowEnd ? array.length + 1 : array.length;
  const parsed = Number(token);
  const index = parsed < 0 ? parsed + size : parsed;
  if (index < 0 || index >= size)
    throw new PatchStepError(`index ${parsed} is out of range (length ${array.length})`);
  return index;
}

/** Walks to the parent of the last token; the parent must exist and be a container. */
function parentOf(document: JsonValue, tokens: string[]): Container {
  let current: JsonValue = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(current, token, false)]!;
    else if (isObject(current) && Object.hasOwn(current, token)) current = current[token]!;
    else throw new PatchStepError(`'${token}' does not exist`);
  }
  if (!Array.isArray(current) && !isObject(current))
    throw new PatchStepError('the parent is not an object or array');
  return current;
}

function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  // defineProperty, not assignment, so a '__proto__' key stays an ordinary field.
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function getValue(document: JsonValue, tokens: string[]): JsonValue {
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false)]!;
  if (!Object.hasOwn(parent, last)) throw new PatchStepError(`'${last}' does not exist`);
  return parent[last]!;
}

function add(document: JsonValue, tokens: string[], value: JsonValue): JsonValue {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
  else setOwn(parent, last, value);
  return document;
}

function remove(document: JsonValue, tokens: string[]): JsonValue {
  if (tokens.length === 0) throw new PatchStepError('cannot remove the whole document');
  const parent = parentOf(document, tokens);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
  else if (Object.hasOwn(parent, last)) delete parent[last];
  else throw new PatchStepError(`'${last}' does not exist`);
  return document;
}

function field(operation: JsonObject, name: string): string {
  const value = operation[name];
  if (typeof value !== 'string') throw new PatchStepError(`'${name}' must be a string`);
  return value;
}

function operationValue(operation: JsonObject): JsonValue {
  if (!Object.hasOwn(operation, 'value')) throw new PatchStepError("'value' is missing");
  return structuredClone(operation.value!);
}

/**
 * json-patch.v4 reads a missing map field as null: `test` of a field that is not there passes when
 * the expected value is null (cluster-api-provider-azure's templates test a list this way before
 * creating it). Only the last field may be missing, and a list index past the end still fails.
 */
function missingFieldTestedAsNull(document: JsonValue, tokens: string[], operation: JsonObject): boolean {
  if (tokens.length === 0 || (operation.value ?? null) !== null) return false;
  const parent = parentOf(document, tokens);
  return !Array.isArray(parent) && !Object.hasOwn(parent, tokens.at(-1)!);
}

function applyOne(document: JsonValue, operation: JsonObject): JsonValue {
  const path = parsePointer(field(operation, 'path'));
  switch (operation.op) {
    case 'add':
      return add(document, path, operationValue(operation));
    case 'remove':
      return remove(document, path);
    case 'replace': {
      const parent = path.length > 0 ? parentOf(document, path) : undefined;
      if (Array.isArray(parent)) {
        parent[arrayIndex(parent, path.at(-1)!, false)] = operationValue(operation);
        return document;
      }
      return add(document, path, operationValue(operation));
    }
    case 'move': {
      const fromPointer = field(operation, 'from');
      const from = parsePointer(fromPointer);
      if (from.length < path.length && from.every((token, i) => token === path[i])) {
        throw new PatchStepError(`cannot move '${fromPointer}' into itself`);
      }
      const value = getValue(document, from);
      return add(remove(document, from), path, value);
    }
    case 'copy':
      return add(document, path, structuredClone(getValue(document, parsePointer(field(operation, 'from')))));
    case 'test':
      if (missingFieldTestedAsNull(document, path, operation)) return document;
      if (!isDeepStrictEqual(getValue(document, path), operationValue(operation))) {
        throw new PatchStepError('the value differs from the expected one');
      }
      return document;
    default:
      throw new PatchStepError(
        typeof operation.op === 'string'
          ? `unknown op '${operation.op}'`
          : `op is not a string: ${JSON.stringify(operation.op)}`,
      );
  }
}

/** Applies RFC 6902 operations to a copy of a document; errors name the failing operation's index, op and path. */
export function applyJson6902(document: JsonValue, operations: JsonValue): JsonValue {
  if (!Array.isArray(operations)) throw new KustomizeError('JSON 6902 patch must be a list of operations.');
  let result = structuredClone(document);
  operations.forEach((operation, index) => {
    const op = isObject(operation) && typeof operation.op === 'string' ? operation.op : '?';
    const path = isObject(operation) && typeof operation.path === 'string' ? operation.path : '?';
    try {
      if (!isObject(operation)) throw new PatchStepError('the operation is not an object');
      // 'replace' removes then adds; the root has no parent, so treat it as a whole-document swap.
      result =
        operation.op === 'replace' && path === '' ? operationValue(operation) : applyOne(result, operation);
    } catch (error) {
      if (!(error instanceof PatchStepError)) throw error;
      throw new KustomizeError(
        `JSON 6902 patch operation ${index} (${op} ${path}) failed: ${error.message}.`,
      );
    }
  });
  return result;
}
