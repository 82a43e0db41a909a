import { objectTitle } from '../event.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** PagerDuty's Events API v2 endpoint when the Provider names none. */
export const PAGERDUTY_API = 'https://events.pagerduty.com';

/**
 * `pagerduty`: Events API v2 `enqueue`; the routing key is the Provider's channel, the dedup key
 * the object, so an error triggers an incident and the next info event resolves it.
 */
export const pagerduty: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n) || !p.channel) return undefined;
  const e = n.event;
  const o = e.involvedObject;
  const dedupKey = `${o.kind}/${o.namespace}/${o.name}`;
  const base = (p.address || PAGERDUTY_API).replace(/\/$/, '');
  const url = base.endsWith('/v2/enqueue') ? base : `${base}/v2/enqueue`;
  if (e.severity === 'info') {
    return jsonPost(url, { routing_key: p.channel, event_action: 'resolve', dedup_key: dedupKey }, p);
  }
  return jsonPost(
    url,
    {
      routing_key: p.channel,
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: {
        summary: `${objectTitle(e)}: ${e.message}`.slice(0, 1024),
        source: e.reportingController,
        severity: 'error',
        timestamp: e.timestamp,
        component: o.name,
        group: o.namespace,
        class: o.kind,
        custom_details: e.metadata,
      },
    },
    p,
  );
};
