// Annotation, label and finalizer names shared by every operator: Flux's under mooring.dev.

/** Any new value asks for a reconcile now; echoed in `status.lastHandledReconcileAt`. */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'reconcile.mooring.dev/requestedAt';

/** Finalizer every reconciled kind carries so cleanup (artifacts, inventory) runs before deletion. */
export const FINALIZER = 'finalizers.mooring.dev';

/** Server-side apply field manager of every Mooring write. */
export const FIELD_MANAGER = 'mooring';

/** Owner labels set on every object a Kustomization applies. */
export const KUSTOMIZE_NAME_LABEL = 'kustomize.mooring.dev/name';
export const KUSTOMIZE_NAMESPACE_LABEL = 'kustomize.mooring.dev/namespace';

/** Owner labels set on every object a HelmRelease applies (Flux's helm.toolkit.fluxcd.io/name and /namespace). */
export const HELM_NAME_LABEL = 'helm.mooring.dev/name';
export const HELM_NAMESPACE_LABEL = 'helm.mooring.dev/namespace';

/** `disabled` keeps an applied object out of garbage collection. */
export const PRUNE_ANNOTATION = 'kustomize.mooring.dev/prune';
export const PRUNE_DISABLED = 'disabled';

/** Per-object server-side apply policy. */
export const SSA_ANNOTATION = 'kustomize.mooring.dev/ssa';
export const SSA_POLICIES = ['Override', 'Merge', 'IfNotPresent', 'Ignore'] as const;
export type SsaPolicy = (typeof SSA_POLICIES)[number];

/** `Enabled` recreates an object when an immutable field changes. */
export const FORCE_ANNOTATION = 'kustomize.mooring.dev/force';
export const FORCE_ENABLED = 'Enabled';

/**
 * On a Kustomization, the source revision whose prune over `spec.deletionBudget` is approved
 * (`mooring approve prune`); it covers that revision only, and is echoed in
 * `status.lastHandledPruneApproval` once the prune is done.
 */
export const APPROVE_PRUNE_ANNOTATION = 'kustomize.mooring.dev/approvePrune';

/** `disabled` skips apply and prune of an object entirely. */
export const RECONCILE_ANNOTATION = 'kustomize.mooring.dev/reconcile';
export const RECONCILE_DISABLED = 'disabled';

/** `disabled` skips postBuild substitution (set on Mooring's own CRDs). */
export const SUBSTITUTE_ANNOTATION = 'kustomize.mooring.dev/substitute';
export const SUBSTITUTE_DISABLED = 'disabled';

/** `Disabled` skips SOPS decryption of an object. */
export const DECRYPT_ANNOTATION = 'kustomize.mooring.dev/decrypt';
export const DECRYPT_DISABLED = 'Disabled';

/**
 * `mooring rollback helmrelease` asks for a rollback with `<revision>@<when>`: the operator makes
 * that Helm revision's manifest the deployed release again, once per distinct value, and holds it
 * until the chart or values change (status.rollbackHold).
 */
export const ROLLBACK_ANNOTATION = 'helm.mooring.dev/rollbackTo';

/**
 * `mooring reconcile helmrelease --force` writes `<time>` here and the same value in
 * reconcile.mooring.dev/requestedAt: a one-off install or upgrade even when nothing changed or the
 * remediation retries ran out (Flux's reconcile.fluxcd.io/forceAt); echoed in status.lastHandledForceAt.
 */
export const FORCE_REQUESTED_AT_ANNOTATION = 'reconcile.mooring.dev/forceAt';
