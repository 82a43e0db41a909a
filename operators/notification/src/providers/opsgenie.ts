import { objectTitle } from '../event.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** `opsgenie`: POST /v2/alerts with `Authorization: GenieKey <token>`; metadata become details. */
export const opsgenie: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n) || !p.token) return undefined;
  const e = n.event;
  const o = e.involvedObject;
  return jsonPost(
    p.address,
    {
      message: `${objectTitle(e)}: ${e.message}`.slice(0, 130),
      description: e.message,
      alias: `${o.kind}/${o.namespace}/${o.name}`,
      source: e.reportingController,
      priority: e.severity === 'error' ? 'P3' : 'P5',
      tags: [e.severity, o.kind],
      details: e.metadata,
    },
    p,
    { authorization: `GenieKey ${p.token}` },
  );
};
