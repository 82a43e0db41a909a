/**
 * What the webhook server needs to know about a sender besides how to verify it: which headers a
 * genuine request must carry (so one without them is refused before its body is read) and which
 * header names the delivery, for the replay cache.
 */
export interface HookTraits {
  /** A request carrying none of these cannot verify; empty when the secret path alone authenticates. */
  signatureHeaders: readonly string[];
  /** The proof is in the headers alone (a token, not an HMAC of the body): verify before reading the body. */
  headerOnly?: boolean;
  /** Headers naming the delivery, the first one present is used; the same value on a retry. */
  deliveryHeaders?: readonly string[];
  /**
   * The signature covers the body but not the delivery header, so a captured request could be
   * replayed under a new delivery ID: the body's digest is remembered too. Only for senders whose
   * bodies differ per event (a push names its commits), so two identical bodies are one event.
   */
  bodyIsUnique?: boolean;
}

// GitHub, and Gitea/Forgejo which sign the same way and send X-GitHub-Delivery beside their own.
const githubLike: HookTraits = {
  signatureHeaders: ['x-hub-signature-256', 'x-hub-signature'],
  deliveryHeaders: ['x-github-delivery', 'x-gitea-delivery', 'x-forgejo-delivery', 'x-gogs-delivery'],
  bodyIsUnique: true,
};

/** Traits by Receiver type; every type in VERIFIERS has an entry. */
export const HOOK_TRAITS: Readonly<Record<string, HookTraits>> = {
  generic: { signatureHeaders: [] },
  'generic-hmac': { signatureHeaders: ['x-signature'] },
  github: githubLike,
  gitea: githubLike,
  // Idempotency-Key (GitLab 17.4+) is kept across retries; X-Gitlab-Event-UUID names the event.
  gitlab: {
    signatureHeaders: ['x-gitlab-token'],
    headerOnly: true,
    deliveryHeaders: ['idempotency-key', 'x-gitlab-event-uuid'],
  },
  // X-Request-UUID from Bitbucket Cloud, X-Request-Id from Bitbucket Server / Data Center.
  bitbucket: {
    signatureHeaders: ['x-hub-signature'],
    deliveryHeaders: ['x-request-uuid', 'x-request-id'],
    bodyIsUnique: true,
  },
  harbor: { signatureHeaders: ['authorization'], headerOnly: true },
  dockerhub: { signatureHeaders: [] },
  quay: { signatureHeaders: [] },
  nexus: { signatureHeaders: ['x-nexus-webhook-signature'] },
  cdevents: { signatureHeaders: [] },
};
