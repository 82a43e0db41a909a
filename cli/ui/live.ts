import type { RowChange } from './api.ts';

type Listener = (changes: RowChange[]) => void;
const listeners = new Set<Listener>();

/** One server-sent event stream for the page; views hear of changes while they are shown. */
export function startLive(status: HTMLElement): void {
  const source = new EventSource('/api/changes');
  source.addEventListener('open', () => {
    status.textContent = 'live';
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
  let timer: number | undefined;
  const batched: Listener = (changes) => {
    pending.push(...changes);
    timer ??= window.setTimeout(() => {
      timer = undefined;
      const all = pending;
      pending = [];
      listener(all);
    }, delayMs);
  };
  listeners.add(batched);
  return () => {
    listeners.delete(batched);
    if (timer !== undefined) window.clearTimeout(timer);
  };
}
