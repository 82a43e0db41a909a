import { type Static, Type } from '@sinclair/typebox';
import { type BaseStatus, LocalObjectReference, ReconcileStatus } from './common.ts';
import { NOTIFICATION_API_VERSION } from './groups.ts';
import { CrossNamespaceObjectReference } from './notification-reference.ts';
import { KubeObject } from './object.ts';
import { StringEnum, StringMap, withDescription } from './schema-kit.ts';

export const EVENT_SEVERITIES = ['info', 'error'] as const;

export const AlertSpec = Type.Object(
  {
    providerRef: withDescription(
      LocalObjectReference,
      'Provider in the same namespace that sends the notifications.',
    ),
    eventSources: Type.Array(CrossNamespaceObjectReference, {
      description: 'Objects whose events are forwarded.',
    }),
    eventSeverity: Type.Optional(
      StringEnum(EVENT_SEVERITIES, {
        description: "'info' forwards every event, 'error' only errors.",
        default: 'info',
      }),
    ),
    inclusionList: Type.Optional(
      Type.Array(Type.String(), { description: 'Regular expressions; a message must match one when set.' }),
    ),
    exclusionList: Type.Optional(
      Type.Array(Type.String(), { description: 'Regular expressions; a matching message is dropped.' }),
    ),
    eventMetadata: Type.Optional(StringMap({ description: 'Metadata added to every notification.' })),
    summary: Type.Optional(
      Type.String({
        description: "Deprecated: use eventMetadata. Becomes metadata 'summary'.",
        maxLength: 255,
      }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop forwarding events.' })),
  },
  { description: 'Which events to forward to a Provider.' },
);
export type AlertSpec = Static<typeof AlertSpec>;

/** Mooring addition: Flux's Alert is static, Mooring reports whether its provider and regexes are valid. */
export const AlertStatus = ReconcileStatus({}, 'Observed state of the Alert.');
export type AlertStatus = BaseStatus;

export const Alert = KubeObject(NOTIFICATION_API_VERSION, 'Alert', AlertSpec, AlertStatus);
export type Alert = Static<typeof Alert>;
