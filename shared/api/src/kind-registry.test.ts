import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AutomationSourceReference } from './image-update-automation.ts';
import {
  IMAGE_UPDATE_SOURCE_KINDS,
  KIND_REGISTRY,
  type KindName,
  type KindRole,
  kindApiVersion,
  kindsOfOperator,
  kindsWithRole,
  NOTIFIABLE_KINDS,
  OPERATOR_NAMES,
  SOURCE_KINDS,
} from './kind-registry.ts';
import { KINDS, kindDefinition } from './kinds.ts';
import { KustomizationSourceReference } from './kustomization.ts';
import { CrossNamespaceObjectReference, ReceiverResourceReference } from './notification-reference.ts';

const enumOf = (schema: { properties: { kind: unknown } }): unknown =>
  (schema.properties.kind as { enum: unknown }).enum;
const withRole = (role: KindRole) => KINDS.filter((k) => k.roles[role]).map((k) => k.kind);

test('KINDS is the registry, in its order, with each kind’s owner and roles', () => {
  assert.deepEqual(
    KINDS.map((k) => k.kind),
    KIND_REGISTRY.map((k) => k.kind),
  );
  for (const reg of KIND_REGISTRY) {
    const def = kindDefinition(reg.kind);
    assert.equal(def.group, reg.group);
    assert.equal(def.plural, reg.plural);
    assert.equal(def.operator, reg.operator);
    assert.deepEqual(def.roles, reg.roles);
  }
});

test('the role lists are the kinds with that role', () => {
  assert.deepEqual(SOURCE_KINDS, withRole('source'));
  assert.deepEqual(NOTIFIABLE_KINDS, withRole('notifiable'));
  assert.deepEqual(IMAGE_UPDATE_SOURCE_KINDS, withRole('imageUpdateSource'));
  // What the operators serve today: Flux's source and notifiable kinds that Mooring has.
  assert.deepEqual(SOURCE_KINDS, ['GitRepository', 'OCIRepository']);
  assert.deepEqual(IMAGE_UPDATE_SOURCE_KINDS, ['GitRepository']);
  // Every kind an operator reconciles and reports on, none of the notification kinds themselves.
  assert.deepEqual(
    NOTIFIABLE_KINDS,
    KINDS.filter((k) => k.operator !== 'notification').map((k) => k.kind),
  );
});

test('the reference schemas’ kind enums are the role lists', () => {
  assert.deepEqual(enumOf(KustomizationSourceReference), SOURCE_KINDS);
  assert.deepEqual(enumOf(CrossNamespaceObjectReference), NOTIFIABLE_KINDS);
  assert.deepEqual(enumOf(ReceiverResourceReference), NOTIFIABLE_KINDS);
  assert.deepEqual(enumOf(AutomationSourceReference), IMAGE_UPDATE_SOURCE_KINDS);
});

test('each operator reconciles some kind, and every kind has one operator', () => {
  for (const op of OPERATOR_NAMES) assert.ok(kindsOfOperator(op).length > 0, `${op} reconciles no kind`);
  assert.deepEqual(
    OPERATOR_NAMES.flatMap((op) => kindsOfOperator(op)).sort(),
    KINDS.map((k) => k.kind).sort(),
  );
});

test('kindApiVersion is the group and version a kind is served at', () => {
  for (const def of KINDS) assert.equal(kindApiVersion(def.kind as KindName), `${def.group}/${def.version}`);
  assert.equal(kindApiVersion('GitRepository'), 'source.mooring.dev/v1');
  assert.throws(() => kindApiVersion('Bucket' as never), /unknown kind Bucket/);
  assert.deepEqual(kindsWithRole('source'), SOURCE_KINDS);
});
