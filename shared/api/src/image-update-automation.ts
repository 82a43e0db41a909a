import { type Static, Type } from '@sinclair/typebox';
import { Interval, LabelSelector, ReconcileStatus, SecretRef } from './common.ts';
import { GitRepositoryRef } from './git-repository.ts';
import { IMAGE_API_VERSION } from './groups.ts';
import { ImageRef } from './image-policy.ts';
import { IMAGE_UPDATE_SOURCE_KINDS } from './kind-registry.ts';
import { KubeObject } from './object.ts';
import { DateTime, MapOf, StringEnum, StringMap, withDescription } from './schema-kit.ts';

export const UPDATE_STRATEGIES = ['Setters'] as const;
export const SIGNING_KEY_TYPES = ['gpg', 'ssh'] as const;

export const AutomationSourceReference = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'API version of the source.' })),
  kind: StringEnum(IMAGE_UPDATE_SOURCE_KINDS, {
    description: 'Kind of the source.',
    default: 'GitRepository',
  }),
  name: Type.String({ description: 'Name of the GitRepository.' }),
  namespace: Type.Optional(Type.String({ description: "Its namespace, this one's by default." })),
});

export const CommitSpec = Type.Object({
  author: Type.Object(
    {
      email: Type.String({ description: 'Author e-mail.' }),
      name: Type.Optional(Type.String({ description: 'Author name.' })),
    },
    { description: 'Author of the commits.' },
  ),
  signingKey: Type.Optional(
    Type.Object(
      {
        secretRef: SecretRef("with the key: 'git.asc' (gpg) or 'identity' (ssh), and its passphrase."),
        type: Type.Optional(StringEnum(SIGNING_KEY_TYPES, { description: 'Key type.', default: 'gpg' })),
      },
      { description: 'Sign commits with this key.' },
    ),
  ),
  messageTemplate: Type.Optional(
    Type.String({
      description: 'Mustache template of the commit message; see operators/image-automation/README.md.',
    }),
  ),
  messageTemplateValues: Type.Optional(
    StringMap({ description: 'Values exposed to the template as .Values.' }),
  ),
});

export const GitAutomationSpec = Type.Object({
  checkout: Type.Optional(
    Type.Object(
      { ref: withDescription(GitRepositoryRef, 'Reference to clone.') },
      { description: "What to clone, the GitRepository's spec.ref by default." },
    ),
  ),
  commit: withDescription(CommitSpec, 'How commits are made.'),
  push: Type.Optional(
    Type.Object(
      {
        branch: Type.Optional(
          Type.String({ description: 'Branch to push to, the checkout branch by default.' }),
        ),
        refspec: Type.Optional(Type.String({ description: 'Extra refspec to push, e.g. refs/for/main.' })),
        options: Type.Optional(StringMap({ description: 'git push -o options.' })),
      },
      { description: 'Where commits are pushed.' },
    ),
  ),
});

export const UpdateStrategy = Type.Object({
  strategy: StringEnum(UPDATE_STRATEGIES, { description: 'How files are edited.', default: 'Setters' }),
  path: Type.Optional(Type.String({ description: 'Directory to edit, the repository root by default.' })),
});

export const ImageUpdateAutomationSpec = Type.Object(
  {
    sourceRef: withDescription(AutomationSourceReference, 'Git repository to update, and its credentials.'),
    /** Required here (optional in Flux, whose controller then fails): Git is the only source kind. */
    git: withDescription(GitAutomationSpec, 'Clone, commit and push settings.'),
    interval: Interval('Least time between two runs.'),
    policySelector: Type.Optional(
      withDescription(LabelSelector, 'ImagePolicies to apply; all in the namespace when empty.'),
    ),
    update: Type.Optional(
      Type.Object(UpdateStrategy.properties, {
        description: 'Where and how to update files.',
        default: { strategy: 'Setters' },
      }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop running.' })),
  },
  { description: 'Commit the images selected by ImagePolicies back to Git.' },
);
export type ImageUpdateAutomationSpec = Static<typeof ImageUpdateAutomationSpec>;

export const ImageUpdateAutomationStatus = ReconcileStatus(
  {
    lastAutomationRunTime: Type.Optional(DateTime({ description: 'When the automation last ran.' })),
    lastPushCommit: Type.Optional(Type.String({ description: 'SHA of the last commit pushed.' })),
    lastPushTime: Type.Optional(DateTime({ description: 'When a commit was last pushed.' })),
    observedPolicies: Type.Optional(MapOf(ImageRef, { description: 'Images applied, by policy name.' })),
    observedSourceRevision: Type.Optional(Type.String({ description: 'Source revision last worked on.' })),
  },
  'Observed state of the ImageUpdateAutomation.',
);
export type ImageUpdateAutomationStatus = Static<typeof ImageUpdateAutomationStatus>;

export const ImageUpdateAutomation = KubeObject(
  IMAGE_API_VERSION,
  'ImageUpdateAutomation',
  ImageUpdateAutomationSpec,
  ImageUpdateAutomationStatus,
);
export type ImageUpdateAutomation = Static<typeof ImageUpdateAutomation>;
