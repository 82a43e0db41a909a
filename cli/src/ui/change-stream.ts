import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ObjectIndex, RowChange } from './object-index.ts';

// Changes are sent in batches this often, so a burst of status writes is one message, not thousands.
const BATCH_MS = 100;
// A comment line this often keeps proxies and the browser from timing the stream out.
const KEEPALIVE_MS = 15_000;

/**
 * Server-sent events of row changes from the index's watches, only those in the namespace and
 * kind the page asked for (`?namespace=&kind=`), batched; the page re-reads its page on them.
 */
export function streamChanges(index: ObjectIndex, req: IncomingMessage, res: ServerResponse): void {
  const params = new URL(req.url ?? '/', 'http://x').searchParams;
  const namespace = params.get('namespace') || undefined;
  const kind = params.get('kind') || undefined;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write('retry: 2000\n\n');
  let pending: RowChange[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    if (pending.length === 0) return;
    res.write(`event: changes\ndata: ${JSON.stringify(pending)}\n\n`);
    pending = [];
  };
  const unsubscribe = index.subscribe((change) => {
    if (namespace && change.row.namespace !== namespace) return;
    if (kind && change.row.kind !== kind) return;
    pending.push(change);
    timer ??= setTimeout(flush, BATCH_MS);
  });
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  req.on('close', () => {
    unsubscribe();
    clearInterval(keepalive);
    if (timer) clearTimeout(timer);
  });
}
