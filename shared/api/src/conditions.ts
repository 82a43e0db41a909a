// Condition types and reasons, with Flux's spelling so kstatus and Flux users read them alike.

/** Condition types. Ready/ArtifactInStorage/SourceVerified/Healthy are normal polarity; the rest are True only when abnormal. */
export const ConditionType = {
  Ready: 'Ready',
  Reconciling: 'Reconciling',
  Stalled: 'Stalled',
  Healthy: 'Healthy',
  ArtifactInStorage: 'ArtifactInStorage',
  ArtifactOutdated: 'ArtifactOutdated',
  SourceVerified: 'SourceVerified',
  FetchFailed: 'FetchFailed',
  BuildFailed: 'BuildFailed',
  StorageOperationFailed: 'StorageOperationFailed',
  IncludeUnavailable: 'IncludeUnavailable',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Condition reasons. */
export const Reason = {
  // Generic (fluxcd/pkg apis/meta).
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Progressing: 'Progressing',
  ProgressingWithRetry: 'ProgressingWithRetry',
  Suspended: 'Suspended',
  DependencyNotReady: 'DependencyNotReady',
  ReconciliationSucceeded: 'ReconciliationSucceeded',
  ReconciliationFailed: 'ReconciliationFailed',
  InvalidPath: 'InvalidPath',
  InvalidURL: 'InvalidURL',
  InsecureConnectionsDisallowed: 'InsecureConnectionsDisallowed',
  UnsupportedConnectionType: 'UnsupportedConnectionType',
  InvalidCELExpression: 'InvalidCELExpression',
  FeatureGateDisabled: 'FeatureGateDisabled',
  AccessDenied: 'AccessDenied',
  AuthenticationFailed: 'AuthenticationFailed',
  // Sources.
  NewRevision: 'NewRevision',
  URLInvalid: 'URLInvalid',
  InvalidProviderConfiguration: 'InvalidProviderConfiguration',
  VerificationError: 'VerificationError',
  GitOperationSucceeded: 'GitOperationSucceeded',
  GitOperationFailed: 'GitOperationFailed',
  OCIArtifactPullFailed: 'OCIArtifactPullFailed',
  OCIArtifactLayerOperationFailed: 'OCIArtifactLayerOperationFailed',
  DirectoryCreationFailed: 'DirectoryCreationFailed',
  StatOperationFailed: 'StatOperationFailed',
  ReadOperationFailed: 'ReadOperationFailed',
  AcquireLockFailed: 'AcquireLockFailed',
  ArchiveOperationFailed: 'ArchiveOperationFailed',
  PatchOperationFailed: 'PatchOperationFailed',
  // Kustomize.
  ArtifactFailed: 'ArtifactFailed',
  BuildFailed: 'BuildFailed',
  PruneFailed: 'PruneFailed',
  HealthCheckFailed: 'HealthCheckFailed',
  HealthCheckCanceled: 'HealthCheckCanceled',
  // Notification.
  TokenNotFound: 'TokenNotFound',
  ValidationFailed: 'ValidationFailed',
  // Image.
  ImageURLInvalid: 'ImageURLInvalid',
  InvalidUpdateStrategy: 'InvalidUpdateStrategy',
  InvalidSourceConfiguration: 'InvalidSourceConfiguration',
  SourceManagerFailed: 'SourceManagerFailed',
  UpdateFailed: 'UpdateFailed',
  InvalidPolicySelector: 'InvalidPolicySelector',
  RemovedTemplateField: 'RemovedTemplateField',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
