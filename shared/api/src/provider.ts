import { type Static, Type } from '@sinclair/typebox';
import { type BaseStatus, Interval, ReconcileStatus, SecretRef, Timeout } from './common.ts';
import { NOTIFICATION_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum } from './schema-kit.ts';

/** Providers that set commit statuses on a Git host. */
export const COMMIT_STATUS_PROVIDER_TYPES = [
  'github',
  'gitlab',
  'gitea',
  'bitbucket',
  'bitbucketserver',
  'azuredevops',
] as const;

/** Providers that comment on pull/merge requests. */
export const CHANGE_REQUEST_PROVIDER_TYPES = [
  'githubpullrequestcomment',
  'gitlabmergerequestcomment',
  'giteapullrequestcomment',
] as const;

export const PROVIDER_TYPES = [
  'generic',
  'generic-hmac',
  'slack',
  'discord',
  'msteams',
  'rocket',
  'googlechat',
  'googlepubsub',
  'webex',
  'sentry',
  'azureeventhub',
  'telegram',
  'lark',
  'matrix',
  'opsgenie',
  'alertmanager',
  'grafana',
  'githubdispatch',
  'pagerduty',
  'datadog',
  'nats',
  'zulip',
  'otel',
  'zoom',
  'incident.io',
  ...COMMIT_STATUS_PROVIDER_TYPES,
  ...CHANGE_REQUEST_PROVIDER_TYPES,
] as const;

const commitStatusTypes = COMMIT_STATUS_PROVIDER_TYPES.map((t) => `'${t}'`).join(', ');

export const ProviderSpec = Type.Object(
  {
    type: StringEnum(PROVIDER_TYPES, { description: 'Kind of endpoint events are sent to.' }),
    address: Type.Optional(
      Type.String({ description: 'Webhook URL, API base or repository URL.', maxLength: 2048 }),
    ),
    channel: Type.Optional(Type.String({ description: 'Channel, room or topic.', maxLength: 2048 })),
    username: Type.Optional(Type.String({ description: 'Sender name.', maxLength: 2048 })),
    secretRef: Type.Optional(SecretRef('with address, token, username/password or headers.')),
    certSecretRef: Type.Optional(SecretRef('with ca.crt, tls.crt and tls.key.')),
    proxySecretRef: Type.Optional(SecretRef('with the proxy address, username and password.')),
    proxy: Type.Optional(
      Type.String({
        description: 'Deprecated: use proxySecretRef. HTTP(S) proxy address.',
        pattern: '^(http|https)://.*$',
        maxLength: 2048,
      }),
    ),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount for workload identity with cloud providers.' }),
    ),
    timeout: Type.Optional(Timeout('Timeout of one send, 15s when empty.')),
    interval: Type.Optional(Interval('Deprecated and unused; kept so Flux manifests apply unchanged.')),
    commitStatusExpr: Type.Optional(
      Type.String({ description: 'CEL over event, provider and alert giving the commit status context.' }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop sending to this provider.' })),
  },
  {
    description: 'Where and how notifications are sent.',
    ...cel({
      rule: `!has(self.commitStatusExpr) || self.type in [${commitStatusTypes}]`,
      message: `commitStatusExpr is only supported for the ${commitStatusTypes} provider types`,
    }),
  },
);
export type ProviderSpec = Static<typeof ProviderSpec>;

/** Mooring addition: Flux's Provider is static, Mooring reports whether its secret and address resolve. */
export const ProviderStatus = ReconcileStatus({}, 'Observed state of the Provider.');
export type ProviderStatus = BaseStatus;

export const Provider = KubeObject(NOTIFICATION_API_VERSION, 'Provider', ProviderSpec, ProviderStatus);
export type Provider = Static<typeof Provider>;
