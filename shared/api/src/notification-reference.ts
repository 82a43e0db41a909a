import { type Static, Type } from '@sinclair/typebox';
import { NOTIFIABLE_KINDS } from './kind-registry.ts';
import { StringEnum, StringMap } from './schema-kit.ts';

// Kinds an Alert can watch and a Receiver can trigger: NOTIFIABLE_KINDS (kind-registry.ts). Flux's
// list also has Bucket, Helm*, ArtifactGenerator and ExternalArtifact, which Mooring does not serve.

const referenceProperties = {
  apiVersion: Type.Optional(Type.String({ description: 'API version of the referent.' })),
  kind: StringEnum(NOTIFIABLE_KINDS, { description: 'Kind of the referent.' }),
  name: Type.String({ description: "Name of the referent, or '*' for all.", minLength: 1, maxLength: 253 }),
  namespace: Type.Optional(
    Type.String({
      description: "Namespace of the referent, the referrer's by default.",
      minLength: 1,
      maxLength: 253,
    }),
  ),
  matchLabels: Type.Optional(StringMap({ description: "Labels the referents must have (with name '*')." })),
};

/** An object, or with name '*' a labelled set of objects, in any namespace. */
export const CrossNamespaceObjectReference = Type.Object(referenceProperties);
export type CrossNamespaceObjectReference = Static<typeof CrossNamespaceObjectReference>;

/** Receiver resources: a wildcard name needs labels, so one webhook cannot trigger a whole namespace by accident. */
export const ReceiverResourceReference = Type.Object(
  {
    ...referenceProperties,
    filter: Type.Optional(Type.String({ description: 'CEL expression selecting which matches to trigger.' })),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: "self.name != '*' || has(self.matchLabels)",
        message: "matchLabels must be set when name is '*'",
      },
    ],
  },
);
export type ReceiverResourceReference = Static<typeof ReceiverResourceReference>;
