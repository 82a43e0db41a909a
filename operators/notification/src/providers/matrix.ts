import { createHash } from 'node:crypto';
import { objectTitle } from '../event.ts';
import { bearer, isCommitStatusUpdate, metadataLines, type PayloadBuilder } from './types.ts';

/**
 * `matrix`: client-server API v3 `PUT /rooms/{roomId}/send/m.room.message/{txnId}` with the access
 * token; the transaction id is a digest of the event, so a retried send is not posted twice.
 */
export const matrix: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n) || !p.channel) return undefined;
  const e = n.event;
  const body = [
    `${e.severity === 'error' ? '💣' : '✅'} ${objectTitle(e)}`,
    e.message,
    ...metadataLines(e.metadata),
  ].join('\n');
  const payload = JSON.stringify({ msgtype: 'm.text', body });
  const txn = createHash('sha256').update(`${p.uid}\n${e.timestamp}\n${payload}`).digest('hex');
  const base = p.address.replace(/\/$/, '');
  return {
    method: 'PUT',
    url: `${base}/_matrix/client/v3/rooms/${encodeURIComponent(p.channel)}/send/m.room.message/${txn}`,
    headers: { ...p.headers, 'content-type': 'application/json', ...bearer(p) },
    body: payload,
  };
};
