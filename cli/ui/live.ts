import type { RowChange } from './api.ts';

type Listener = (changes: RowChange[]) => void;
const listeners = new Set<Listener>();

/** The batch a view hears when the stream (re)connects: re-read everything shown. */
export const RESYNC: RowChange[] = [];

/** One server-sent event stream for the page; views hear of changes while they are shown. */
export function startLive(status: HTMLElement): void {
  const source = new EventSource('/api/changes');
  source.addEventListener('open', () => {
    status.textContent = 'live';
    // Changes made while the stream was down (or before it first opened) were not sent: every
    // view re-reads what it shows.
    for (const listener of listeners) listener(RESYNC);
  });
  source.addEventListener('error', () => {
    status.textContent = 'reconnecting…';
  });
  source.addEventListener('changes', (ev) => {
    const changes = JSON.parse((ev as MessageEvent<string>).data) as RowChange[];
    status.textContent = `live · last change ${new Date().toLocaleTimeString()}`;
    for (const listener of listeners) listener(changes);
  });
}

/** Calls `listener` on changes, at most once per `delayMs` (a burst is one call), until stopped. */
export function onChanges(listener: Listener, delayMs = 200): () => void {
  let pending: RowChange[] = [];
  let resync = false;
  let timer: number | undefined;
  const batched: Listener = (changes) => {
    if (changes === RESYNC) resync = true;
    pending.push(...changes);
    timer ??= window.setTimeout(() => {
      timer = undefined;
      const all = resync ? RESYNC : pending;
      pending = [];
      resync = false;
      listener(all);
    }, delayMs);
  };
  listeners.add(batched);
  return () => {
    listeners.delete(batched);
    if (timer !== undefined) window.clearTimeout(timer);
  };
}
