/**
 * `notification.mooring.dev/webhookAcceptedAt`: when a Receiver accepted the webhook that asked
 * this object to reconcile (RFC 3339, the same value as its `requestedAt`). Unlike `requestedAt`,
 * which `mooring reconcile` sets too, it marks a push, so the kustomize operator can time push to
 * applied (`mooring_push_to_applied_seconds`).
 */
export const WEBHOOK_ACCEPTED_AT_ANNOTATION = 'notification.mooring.dev/webhookAcceptedAt';
