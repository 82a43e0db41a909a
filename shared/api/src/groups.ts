/** API groups of Mooring's kinds; every kind is served at version v1 but HelmRelease (v2, as Flux's). */
export const SOURCE_GROUP = 'source.mooring.dev';
export const KUSTOMIZE_GROUP = 'kustomize.mooring.dev';
export const NOTIFICATION_GROUP = 'notification.mooring.dev';
export const IMAGE_GROUP = 'image.mooring.dev';
export const HELM_GROUP = 'helm.mooring.dev';
export const API_VERSION = 'v1';
/** HelmRelease keeps Flux helm-controller's version, so a migrated manifest changes only its group. */
export const HELM_VERSION = 'v2';

export const SOURCE_API_VERSION = `${SOURCE_GROUP}/${API_VERSION}` as const;
export const KUSTOMIZE_API_VERSION = `${KUSTOMIZE_GROUP}/${API_VERSION}` as const;
export const NOTIFICATION_API_VERSION = `${NOTIFICATION_GROUP}/${API_VERSION}` as const;
export const IMAGE_API_VERSION = `${IMAGE_GROUP}/${API_VERSION}` as const;
export const HELM_API_VERSION = `${HELM_GROUP}/${HELM_VERSION}` as const;
