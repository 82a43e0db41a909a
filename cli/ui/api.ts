import type { ActionResult } from '../src/ui/actions.ts';
import type { ObjectDetail } from '../src/ui/object-detail.ts';
import type { Graph } from '../src/ui/object-graph.ts';
import type { RowChange, RowPage } from '../src/ui/object-index.ts';

export type { ObjectDiff } from '../src/live-diff.ts';
export type { ObjectRow } from '../src/ui/object-row.ts';
export type { ActionResult, Graph, ObjectDetail, RowChange, RowPage };

/** GETs a JSON API path; a refusal throws with the server's message. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json().catch(() => ({}))) as T & { message?: string };
  if (!res.ok) throw new Error(body.message ?? `${path}: HTTP ${res.status}`);
  return body;
}

/** Asks the server to act as the user; the result says what the API server answered. */
export async function postAction(
  action: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<ActionResult> {
  const res = await fetch('/api/action', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action, kind, namespace, name }),
  });
  const body = (await res.json().catch(() => ({ message: `HTTP ${res.status}` }))) as ActionResult;
  return { ...body, ok: res.ok && body.ok };
}

/** Query string from the set values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
