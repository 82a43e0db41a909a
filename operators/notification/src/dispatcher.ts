import { type Alert, NOTIFICATION_API_VERSION, type Provider } from '@mooring/api';
import type { ControllerEvents, KubeClient, KubeObject, RuntimeLogger } from '@mooring/runtime';
import { matchAlert, needsLabels } from './alert-matcher.ts';
import { AlertThrottle, type Suppressed, type ThrottleOptions } from './alert-throttle.ts';
import type { InboundEvent } from './event.ts';
import { KIND_API_VERSIONS } from './kind-versions.ts';
import { ProviderConfigError, resolveProvider } from './provider-config.ts';
import { type SendOptions, sendRequest } from './providers/http-sender.ts';
import { PAYLOAD_BUILDERS } from './providers/index.ts';
import type { Notification } from './providers/types.ts';

export interface DispatcherOptions {
  client: Pick<KubeClient, 'get' | 'list'>;
  log: RuntimeLogger;
  /** Where warnings about Alerts (invalid regex) and Providers (failed sends) are recorded. */
  events?: ControllerEvents;
  noCrossNamespaceRefs: boolean;
  /** Only Alerts of this namespace; all namespaces when absent. */
  watchNamespace?: string;
  send?: SendOptions;
  throttle?: ThrottleOptions;
}

/** One notification that went out, or why it did not; tests and metrics read these. */
export interface DispatchOutcome {
  alert: string;
  provider: string;
  result: 'sent' | 'skipped' | 'throttled' | 'failed';
  detail?: string;
}

interface Pending {
  alert: Alert;
  notification: Notification;
}

/**
 * Sends an event to every matching Alert's Provider. Never throws: every failure is logged and,
 * where a user can fix it, recorded as an event on the Alert or Provider.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  readonly #throttle: AlertThrottle<Pending>;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#throttle = new AlertThrottle<Pending>((key, s) => void this.#summary(key, s), options.throttle);
  }

  /** Matches and sends one event; resolves when every send has finished. */
  async dispatch(event: InboundEvent): Promise<DispatchOutcome[]> {
    let alerts: Alert[];
    try {
      alerts = (
        await this.#o.client.list<Alert>(NOTIFICATION_API_VERSION, 'Alert', {
          namespace: this.#o.watchNamespace,
        })
      ).items;
    } catch (err) {
      this.#o.log.error({ err: (err as Error).message }, 'listing Alerts failed; event dropped');
      return [];
    }
    let labels: Record<string, string> | undefined;
    const work: Promise<DispatchOutcome>[] = [];
    for (const alert of alerts) {
      if (labels === undefined && needsLabels(alert, event)) labels = await this.#labelsOf(event);
      const m = matchAlert(event, alert, { noCrossNamespaceRefs: this.#o.noCrossNamespaceRefs, labels });
      if (!m.matched) {
        if ('invalid' in m) {
          this.#o.log.warn({ alert: keyOf(alert), err: m.invalid }, 'Alert has an invalid pattern');
          this.#o.events?.record(alert, { severity: 'error', reason: 'InvalidConfig', message: m.invalid });
        }
        continue;
      }
      const notification: Notification = {
        event: { ...event, metadata: m.metadata },
        alert: { name: alert.metadata.name ?? '', namespace: alert.metadata.namespace ?? '' },
      };
      const pending = { alert, notification };
      if (!this.#throttle.admit(keyOf(alert), pending, event.severity)) {
        work.push(
          Promise.resolve({
            alert: keyOf(alert),
            provider: alert.spec.providerRef.name,
            result: 'throttled',
          }),
        );
        continue;
      }
      work.push(this.#send(pending));
    }
    return Promise.all(work);
  }

  /** Stops pending summaries. */
  close(): void {
    this.#throttle.close();
  }

  async #labelsOf(event: InboundEvent): Promise<Record<string, string>> {
    const o = event.involvedObject;
    const apiVersion = o.apiVersion || KIND_API_VERSIONS[o.kind];
    if (!apiVersion) return {};
    try {
      const obj = await this.#o.client.get<KubeObject>({
        apiVersion,
        kind: o.kind,
        namespace: o.namespace,
        name: o.name,
      });
      return obj.metadata.labels ?? {};
    } catch {
      return {};
    }
  }

  async #send({ alert, notification }: Pending): Promise<DispatchOutcome> {
    const ns = alert.metadata.namespace ?? '';
    const providerName = alert.spec.providerRef.name;
    const out = (result: DispatchOutcome['result'], detail?: string): DispatchOutcome => ({
      alert: keyOf(alert),
      provider: `${ns}/${providerName}`,
      result,
      detail,
    });
    let provider: Provider;
    try {
      provider = await this.#o.client.get<Provider>({
        apiVersion: NOTIFICATION_API_VERSION,
        kind: 'Provider',
        namespace: ns,
        name: providerName,
      });
    } catch {
      this.#o.log.warn(
        { alert: keyOf(alert), provider: providerName },
        'Provider of the Alert not found; event dropped',
      );
      return out('skipped', 'provider not found');
    }
    if (provider.spec.suspend) return out('skipped', 'provider suspended');
    try {
      const config = await resolveProvider(this.#o.client, provider);
      const req = PAYLOAD_BUILDERS[config.type]?.(notification, config);
      if (!req) return out('skipped', `type ${config.type} does not take this event`);
      const status = await sendRequest(req, config, this.#o.send);
      this.#o.log.debug({ alert: keyOf(alert), provider: providerName, status }, 'notification sent');
      return out('sent');
    } catch (err) {
      const message =
        err instanceof ProviderConfigError
          ? err.message
          : `sending to Provider ${ns}/${providerName} failed: ${(err as Error).message}`;
      this.#o.log.warn(
        { alert: keyOf(alert), provider: providerName, err: message },
        'notification not sent',
      );
      this.#o.events?.record(provider, { severity: 'error', reason: 'NotificationFailed', message });
      return out('failed', message);
    }
  }

  async #summary(_key: string, s: Suppressed<Pending>): Promise<void> {
    const { alert, notification } = s.last;
    const message = `${s.count} notification${s.count === 1 ? '' : 's'} (${s.errors} error${s.errors === 1 ? '' : 's'}) of Alert ${keyOf(alert)} were held back by its rate limit; the last: ${notification.event.message}`;
    const summary: Pending = {
      alert,
      notification: {
        ...notification,
        event: {
          ...notification.event,
          severity: s.errors > 0 ? 'error' : 'info',
          reason: 'NotificationsSuppressed',
          message,
          timestamp: new Date().toISOString(),
        },
      },
    };
    await this.#send(summary);
  }
}

function keyOf(obj: { metadata: { namespace?: string; name?: string } }): string {
  return `${obj.metadata.namespace}/${obj.metadata.name}`;
}
