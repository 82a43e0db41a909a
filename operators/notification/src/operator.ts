import type { Alert, Provider, Receiver } from '@mooring/api';
import {
  type FlagSpec,
  type FlagTable,
  flagChecks,
  type MooringObject,
  type OperatorContext,
  type OperatorDefinition,
  parseDuration,
  parseListenAddress,
  type Reconciler,
  type RuntimeLogger,
} from '@mooring/runtime';
import { alertReconciler } from './alert-reconciler.ts';
import type { ThrottleOptions } from './alert-throttle.ts';
import { Dispatcher } from './dispatcher.ts';
import { EventServer } from './event-server.ts';
import { providerReconciler } from './provider-reconciler.ts';
import type { SendOptions } from './providers/http-sender.ts';
import { ReceiverCache } from './receiver-cache.ts';
import { receiverReconciler } from './receiver-reconciler.ts';
import { ReceiverServer, type ReceiverServerOptions } from './receiver-server.ts';

/** The port of `--events-addr` (the URL every operator posts events to), as a listen address. */
function eventsAddrPort(eventsAddr: string | undefined): string | undefined {
  if (!eventsAddr) return undefined;
  const url = new URL(eventsAddr);
  return `:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/** This operator's own flags, besides the shared ones; parsed and checked with them. */
export const NOTIFICATION_FLAGS = {
  'receiver-addr': {
    type: 'string',
    default: ':9292',
    help: 'Address the Receiver webhook server listens on.',
    check: flagChecks.listenAddress,
  },
  'events-listen-addr': {
    type: 'string',
    default: ':9090',
    shown: 'the port of `--events-addr`, else `:9090`',
    help: 'Address the event server listens on; by default the port the other operators post to, so one flag sets both ends.',
    check: flagChecks.listenAddress,
    derive: (get) => eventsAddrPort(get('events-addr')),
  },
  'rate-limit-interval': {
    type: 'string',
    default: '5m',
    help: 'An event equal to one received within this time is answered 429 and not dispatched again.',
    check: flagChecks.duration(0),
  },
} satisfies FlagTable;

/** Ports the two servers bound, for tests that listen on port 0. */
export interface NotificationPorts {
  events: number;
  receiver: number;
}

/** Knobs tests turn; production uses the defaults. */
export interface NotificationTuning {
  onListening?: (ports: NotificationPorts) => void;
  send?: SendOptions;
  throttle?: ThrottleOptions;
  receiverLimits?: Pick<
    ReceiverServerOptions,
    | 'perSource'
    | 'unverified'
    | 'perReceiver'
    | 'maxBodyBytes'
    | 'headersTimeoutMs'
    | 'requestTimeoutMs'
    | 'bodyTimeoutMs'
  >;
  /** Logger of the servers and the dispatcher; the operator's own by default. */
  log?: RuntimeLogger;
}

interface Resolved {
  eventsAddr: { host: string | undefined; port: number };
  receiverAddr: { host: string | undefined; port: number };
  rateLimitIntervalMs: number;
}

/** The flags, typed; `parseOperatorOptions` has resolved (the event server's port from `--events-addr`) and checked them. */
function resolveFlags(ctx: OperatorContext): Resolved {
  const text = (name: keyof typeof NOTIFICATION_FLAGS): string => {
    const v = ctx.options.extra[name];
    if (typeof v === 'string') return v;
    const spec: FlagSpec = NOTIFICATION_FLAGS[name];
    return spec.derive?.((f) => (f === 'events-addr' ? ctx.options.eventsAddr : undefined)) ?? spec.default!;
  };
  return {
    eventsAddr: parseListenAddress(text('events-listen-addr')),
    receiverAddr: parseListenAddress(text('receiver-addr')),
    rateLimitIntervalMs: parseDuration(text('rate-limit-interval')),
  };
}

/**
 * The notification operator: the event server and the Receiver webhook server run on every
 * replica; the Alert, Provider and Receiver reconcilers under the leader lease.
 */
export function notificationOperator(tuning: NotificationTuning = {}): OperatorDefinition {
  return {
    name: 'notification',
    extraFlags: NOTIFICATION_FLAGS,
    async start(ctx) {
      const flags = resolveFlags(ctx);
      const log = tuning.log ?? ctx.log.child({ operator: 'notification' });
      const dispatcher = new Dispatcher({
        client: ctx.client,
        log,
        events: ctx.events,
        noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
        watchNamespace: ctx.options.watchNamespace,
        send: tuning.send,
        throttle: tuning.throttle,
      });
      const events = new EventServer({
        dispatch: (e) => dispatcher.dispatch(e),
        log,
        rateLimitIntervalMs: flags.rateLimitIntervalMs,
      });
      // On every replica, like the server: a webhook is answered from this cache, never from a
      // live read, and a replica that is not the leader answers as well as the leader.
      const cache = new ReceiverCache(ctx.client, {
        namespace: ctx.options.watchNamespace,
        labelSelector: ctx.options.watchLabelSelector,
        onError: (err) => log.warn({ err: err.message }, 'receiver cache restarting after error'),
      });
      const receivers = new ReceiverServer({
        client: ctx.client,
        receivers: cache,
        log,
        noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
        ...tuning.receiverLimits,
      });
      const eventsPort = await events.listen(flags.eventsAddr.port, flags.eventsAddr.host);
      let receiverPort: number;
      try {
        receiverPort = await receivers.listen(flags.receiverAddr.port, flags.receiverAddr.host);
      } catch (err) {
        await events.close();
        throw err;
      }
      // Until both informers have listed, webhooks are answered 503 with Retry-After.
      const synced = cache.start();
      log.info({ eventsPort, receiverPort }, 'event and webhook servers listening');
      tuning.onListening?.({ events: eventsPort, receiver: receiverPort });
      return async () => {
        await receivers.close();
        await cache.stop();
        await synced;
        await events.close();
        dispatcher.close();
      };
    },
    reconcilers(ctx) {
      const cross = { noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs };
      // The runtime erases object types across kinds; each reconciler still only sees its own kind.
      return [
        alertReconciler(ctx.client, cross) as Reconciler<Alert> as unknown as Reconciler<MooringObject>,
        providerReconciler(ctx.client) as Reconciler<Provider> as unknown as Reconciler<MooringObject>,
        receiverReconciler(ctx.client, cross) as Reconciler<Receiver> as unknown as Reconciler<MooringObject>,
      ];
    },
  };
}
