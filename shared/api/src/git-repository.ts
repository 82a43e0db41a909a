import { type Static, Type } from '@sinclair/typebox';
import { Artifact, Interval, LocalObjectReference, ReconcileStatus, SecretRef, Timeout } from './common.ts';
import { SOURCE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum, withDescription } from './schema-kit.ts';

export const GIT_PROVIDERS = ['generic', 'aws', 'azure', 'github'] as const;
export const GIT_VERIFICATION_MODES = ['head', 'HEAD', 'Tag', 'TagAndHEAD'] as const;

/** The Git reference to check out; precedence commit > name > semver > tag > branch. */
export const GitRepositoryRef = Type.Object({
  branch: Type.Optional(Type.String({ description: "Branch to check out, 'master' when nothing is set." })),
  tag: Type.Optional(Type.String({ description: 'Tag to check out, takes precedence over branch.' })),
  semver: Type.Optional(
    Type.String({ description: 'SemVer range of tags; the highest match wins over tag.' }),
  ),
  name: Type.Optional(
    Type.String({ description: 'Full reference, e.g. refs/pull/420/head; wins over branch, tag, semver.' }),
  ),
  commit: Type.Optional(
    Type.String({ description: 'Commit SHA, wins over every other field; with branch, a shallow clone.' }),
  ),
});
export type GitRepositoryRef = Static<typeof GitRepositoryRef>;

export const GitRepositoryVerification = Type.Object({
  mode: Type.Optional(
    StringEnum(GIT_VERIFICATION_MODES, {
      description: "Which objects to verify; 'head' is an alias of HEAD.",
      default: 'HEAD',
    }),
  ),
  secretRef: SecretRef('with trusted public keys: *.asc (PGP) or *.sshpub (SSH).'),
});

export const GitRepositoryInclude = Type.Object({
  repository: withDescription(LocalObjectReference, 'GitRepository whose artifact is included.'),
  fromPath: Type.Optional(Type.String({ description: 'Path to copy from, the artifact root by default.' })),
  toPath: Type.Optional(Type.String({ description: 'Path to copy to, the repository name by default.' })),
});
export type GitRepositoryInclude = Static<typeof GitRepositoryInclude>;

export const GitRepositorySpec = Type.Object(
  {
    url: Type.String({
      description: 'HTTP(S) or SSH address of the repository.',
      pattern: '^(http|https|ssh)://.*$',
    }),
    secretRef: Type.Optional(
      SecretRef('with credentials: username/password or bearerToken, identity/known_hosts, TLS keys.'),
    ),
    provider: Type.Optional(
      StringEnum(GIT_PROVIDERS, { description: "Authentication provider, 'generic' when empty." }),
    ),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount for workload identity (providers azure and aws).' }),
    ),
    interval: Interval('How often the repository is checked for new revisions.'),
    timeout: Type.Optional(Timeout('Timeout of Git operations.', { default: '60s' })),
    ref: Type.Optional(
      withDescription(GitRepositoryRef, "Reference to check out, branch 'master' by default."),
    ),
    verify: Type.Optional(withDescription(GitRepositoryVerification, 'Verify commit or tag signatures.')),
    proxySecretRef: Type.Optional(SecretRef('with the proxy address, username and password.')),
    ignore: Type.Optional(
      Type.String({ description: 'Exclusion patterns in .gitignore syntax; replace the defaults.' }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
    recurseSubmodules: Type.Optional(Type.Boolean({ description: 'Initialise submodules.' })),
    include: Type.Optional(
      Type.Array(GitRepositoryInclude, { description: 'Artifacts of other GitRepositories to copy in.' }),
    ),
    sparseCheckout: Type.Optional(
      Type.Array(Type.String(), { description: 'Only these directories end up in the artifact.' }),
    ),
  },
  {
    description: 'Which Git repository and revision to package as an artifact.',
    ...cel({
      rule: "!has(self.serviceAccountName) || (has(self.provider) && (self.provider == 'azure' || self.provider == 'aws'))",
      message: "serviceAccountName can only be set when provider is 'azure' or 'aws'",
    }),
  },
);
export type GitRepositorySpec = Static<typeof GitRepositorySpec>;

export const GitRepositoryStatus = ReconcileStatus(
  {
    artifact: Type.Optional(withDescription(Artifact, 'Artifact of the last successful reconcile.')),
    includedArtifacts: Type.Optional(
      Type.Array(Artifact, { description: 'Artifacts included through spec.include.' }),
    ),
    observedIgnore: Type.Optional(Type.String({ description: 'spec.ignore the artifact was built with.' })),
    observedRecurseSubmodules: Type.Optional(
      Type.Boolean({ description: 'spec.recurseSubmodules the artifact was built with.' }),
    ),
    observedInclude: Type.Optional(
      Type.Array(GitRepositoryInclude, { description: 'spec.include the artifact was built with.' }),
    ),
    observedSparseCheckout: Type.Optional(
      Type.Array(Type.String(), { description: 'spec.sparseCheckout the artifact was built with.' }),
    ),
    sourceVerificationMode: Type.Optional(
      Type.String({ description: 'Verification mode used for the current artifact.' }),
    ),
  },
  'Observed state of the GitRepository.',
);
export type GitRepositoryStatus = Static<typeof GitRepositoryStatus>;

export const GitRepository = KubeObject(
  SOURCE_API_VERSION,
  'GitRepository',
  GitRepositorySpec,
  GitRepositoryStatus,
);
export type GitRepository = Static<typeof GitRepository>;
