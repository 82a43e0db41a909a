import { type Static, Type } from '@sinclair/typebox';
import { Interval, ReconcileStatus, SecretRef } from './common.ts';
import { NOTIFICATION_API_VERSION } from './groups.ts';
import { ReceiverResourceReference } from './notification-reference.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum } from './schema-kit.ts';

export const RECEIVER_TYPES = [
  'generic',
  'generic-hmac',
  'generic-oidc',
  'github',
  'gitea',
  'gitlab',
  'bitbucket',
  'harbor',
  'dockerhub',
  'quay',
  'gcr',
  'nexus',
  'acr',
  'cdevents',
] as const;

export const OIDCProvider = Type.Object({
  issuerURL: Type.String({ description: 'Issuer whose discovery document and keys validate the token.' }),
  audience: Type.Optional(Type.String({ description: 'Expected audience of the token.' })),
  variables: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ description: 'Variable name.' }),
        expression: Type.String({ description: 'CEL over the claims.' }),
      }),
      { description: 'Named CEL values usable in the validations.' },
    ),
  ),
  validations: Type.Array(
    Type.Object({
      expression: Type.String({ description: 'CEL that must be true.' }),
      message: Type.String({ description: 'Error returned when it is false.' }),
    }),
    { description: 'Rules the token claims must satisfy.' },
  ),
});

export const ReceiverSpec = Type.Object(
  {
    type: StringEnum(RECEIVER_TYPES, { description: 'How requests are verified and parsed.' }),
    interval: Type.Optional(Interval('How often the secret is re-read.', { default: '10m' })),
    events: Type.Optional(
      Type.Array(Type.String(), { description: 'Event types accepted (e.g. push); all when empty.' }),
    ),
    resources: Type.Array(ReceiverResourceReference, {
      description: 'Objects to reconcile on a valid request.',
    }),
    resourceFilter: Type.Optional(
      Type.String({ description: 'CEL over res (object metadata) and req (body) choosing the objects.' }),
    ),
    secretRef: Type.Optional(SecretRef("with the 'token' that signs or authenticates requests.")),
    oidcProviders: Type.Optional(
      Type.Array(OIDCProvider, { description: 'Token issuers accepted by the generic-oidc type.' }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Answer requests with 503.' })),
  },
  {
    description: 'A webhook that asks objects to reconcile now.',
    ...cel(
      {
        rule: "self.type == 'generic-oidc' || has(self.secretRef)",
        message: 'secretRef is required for this type',
      },
      {
        rule: "self.type != 'generic-oidc' || has(self.oidcProviders)",
        message: 'oidcProviders is required for type generic-oidc',
      },
      {
        rule: "!has(self.oidcProviders) || self.type == 'generic-oidc'",
        message: 'oidcProviders is only supported for type generic-oidc',
      },
    ),
  },
);
export type ReceiverSpec = Static<typeof ReceiverSpec>;

export const ReceiverStatus = ReconcileStatus(
  {
    webhookPath: Type.Optional(
      Type.String({
        description: 'Path the webhook is served at: /hook/<sha256 of token, name, namespace>.',
      }),
    ),
  },
  'Observed state of the Receiver.',
);
export type ReceiverStatus = Static<typeof ReceiverStatus>;

export const Receiver = KubeObject(NOTIFICATION_API_VERSION, 'Receiver', ReceiverSpec, ReceiverStatus);
export type Receiver = Static<typeof Receiver>;
