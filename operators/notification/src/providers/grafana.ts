import { objectTitle } from '../event.ts';
import { basicAuth } from './basic-auth.ts';
import { bearer, isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** `grafana`: an annotation (POST /api/annotations) tagged with the object and its metadata. */
export const grafana: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n)) return undefined;
  const e = n.event;
  const o = e.involvedObject;
  const tags = [
    'mooring',
    e.reportingController,
    `kind:${o.kind}`,
    `name:${o.name}`,
    `namespace:${o.namespace}`,
    `severity:${e.severity}`,
  ];
  for (const k of Object.keys(e.metadata).sort()) tags.push(`${k}:${e.metadata[k]}`);
  const time = Date.parse(e.timestamp);
  return jsonPost(
    p.address,
    { time: Number.isNaN(time) ? Date.now() : time, text: `${objectTitle(e)}: ${e.message}`, tags },
    p,
    p.token ? bearer(p) : basicAuth(p),
  );
};
