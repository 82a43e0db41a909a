import { bearer, isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** Label values Alertmanager accepts: strings; names must match [a-zA-Z_][a-zA-Z0-9_]*. */
const labelName = (k: string) => k.replace(/[^a-zA-Z0-9_]/g, '_').replace(/^([0-9])/, '_$1');

/**
 * `alertmanager`: POST /api/v2/alerts with one firing alert; identity in labels (alertname, kind,
 * name, namespace, severity, reason, metadata), text in annotations. Info events resolve at once.
 */
export const alertmanager: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n)) return undefined;
  const e = n.event;
  const o = e.involvedObject;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.metadata)) if (k !== 'summary') labels[labelName(k)] = v;
  Object.assign(labels, {
    alertname: `Mooring${o.kind}${e.reason}`,
    severity: e.severity,
    reason: e.reason,
    kind: o.kind,
    name: o.name,
    namespace: o.namespace,
    reportingController: e.reportingController,
  });
  const annotations: Record<string, string> = { message: e.message };
  if (e.metadata.summary) annotations.summary = e.metadata.summary;
  const alert: Record<string, unknown> = { labels, annotations, startsAt: e.timestamp };
  if (e.severity === 'info') alert.endsAt = e.timestamp;
  return jsonPost(p.address, [alert], p, bearer(p));
};
