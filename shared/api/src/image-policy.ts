import { type Static, Type } from '@sinclair/typebox';
import { Interval, NamespacedObjectReference, ReconcileStatus } from './common.ts';
import { IMAGE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum, withDescription } from './schema-kit.ts';

export const SORT_ORDERS = ['asc', 'desc'] as const;
export const DIGEST_REFLECTION_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

const Ordering = (what: string) =>
  Type.Object({
    order: Type.Optional(
      StringEnum(SORT_ORDERS, { description: `${what} order; the last tag in it wins.`, default: 'asc' }),
    ),
  });

/** The selection rule: exactly one of semver, alphabetical and numerical. */
export const ImagePolicyChoice = Type.Object(
  {
    semver: Type.Optional(
      Type.Object(
        { range: Type.String({ description: 'SemVer range, e.g. >=1.0.0 <2.0.0.' }) },
        { description: 'Highest tag in a SemVer range; non-SemVer tags are ignored.' },
      ),
    ),
    alphabetical: Type.Optional(withDescription(Ordering('Alphabetical'), 'Order tags alphabetically.')),
    numerical: Type.Optional(withDescription(Ordering('Numerical'), 'Order tags as numbers.')),
  },
  cel({
    rule: '(has(self.semver) ? 1 : 0) + (has(self.alphabetical) ? 1 : 0) + (has(self.numerical) ? 1 : 0) == 1',
    message: 'set exactly one of semver, alphabetical and numerical',
  }),
);
export type ImagePolicyChoice = Static<typeof ImagePolicyChoice>;

export const TagFilter = Type.Object({
  pattern: Type.Optional(Type.String({ description: 'Regular expression tags must match.' })),
  extract: Type.Optional(
    Type.String({ description: 'Replacement (e.g. $ts) giving the value the policy orders by.' }),
  ),
});

/** A selected image: name, tag and, with digest reflection, digest. */
export const ImageRef = Type.Object({
  name: Type.String({ description: 'Image name.' }),
  tag: Type.String({ description: 'Image tag.' }),
  digest: Type.Optional(Type.String({ description: 'Image digest.' })),
});
export type ImageRef = Static<typeof ImageRef>;

export const ImagePolicySpec = Type.Object(
  {
    imageRepositoryRef: withDescription(
      NamespacedObjectReference,
      'ImageRepository whose tags are chosen from.',
    ),
    policy: withDescription(ImagePolicyChoice, 'How the latest tag is chosen.'),
    filterTags: Type.Optional(withDescription(TagFilter, 'Filter applied before the policy.')),
    digestReflectionPolicy: Type.Optional(
      StringEnum(DIGEST_REFLECTION_POLICIES, {
        description: 'When to look up the digest of the chosen tag.',
        default: 'Never',
      }),
    ),
    interval: Type.Optional(
      Interval('How often the digest is refreshed; only with digestReflectionPolicy Always.'),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  {
    description: 'Which tag of an ImageRepository counts as the latest.',
    ...cel(
      {
        rule: "!has(self.interval) || (has(self.digestReflectionPolicy) && self.digestReflectionPolicy == 'Always')",
        message: "interval is only accepted when digestReflectionPolicy is 'Always'",
      },
      {
        rule: "!has(self.digestReflectionPolicy) || self.digestReflectionPolicy != 'Always' || has(self.interval)",
        message: "interval must be set when digestReflectionPolicy is 'Always'",
      },
    ),
  },
);
export type ImagePolicySpec = Static<typeof ImagePolicySpec>;

export const ImagePolicyStatus = ReconcileStatus(
  {
    latestRef: Type.Optional(withDescription(ImageRef, 'The image the policy currently selects.')),
    observedPreviousRef: Type.Optional(withDescription(ImageRef, 'The image selected before it.')),
  },
  'Observed state of the ImagePolicy.',
);
export type ImagePolicyStatus = Static<typeof ImagePolicyStatus>;

export const ImagePolicy = KubeObject(IMAGE_API_VERSION, 'ImagePolicy', ImagePolicySpec, ImagePolicyStatus);
export type ImagePolicy = Static<typeof ImagePolicy>;
