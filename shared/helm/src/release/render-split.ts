// Helm's split of a render into the release's manifest and its hooks (pkg/releaseutil
// manifest_sorter.go, v3.22.0), applied to the stream `helm template` and renderChart print: the
// release's documents first, then the hooks, each `---\n# Source: <path>\n<doc>\n`.
import { parseDocument } from 'yaml';
import type { HookDeletePolicy, HookEvent, HookOutputLogPolicy, HookRecord } from './release-record.ts';

/** A render and its split: `manifest` is the text Helm stores as Release.Manifest. */
export interface SplitRender {
  manifest: string;
  hooks: HookRecord[];
}

/** The stream is not one Helm printed: a document without its `# Source:` line, or bad YAML. */
export class RenderSplitError extends Error {
  override name = 'RenderSplitError';
}

/** Helm's hook annotation values, with Helm 2's `test-success` read as `test`. */
const EVENTS: Readonly<Record<string, HookEvent>> = {
  'pre-install': 'pre-install',
  'post-install': 'post-install',
  'pre-delete': 'pre-delete',
  'post-delete': 'post-delete',
  'pre-upgrade': 'pre-upgrade',
  'post-upgrade': 'post-upgrade',
  'pre-rollback': 'pre-rollback',
  'post-rollback': 'post-rollback',
  test: 'test',
  'test-success': 'test',
};

// Helm's own document separator (releaseutil.SplitManifests).
const SEPARATOR = /(?:^|\s*\n)---\s*/;
const SOURCE = /^# Source: ([^\n]*)(?:\n|$)/;

/** The documents of a stream as Helm splits it: trimmed, empty ones dropped. */
function documents(stream: string): string[] {
  return stream
    .trim()
    .split(SEPARATOR)
    .filter((d) => d !== '')
    .map((d) => d.trim());
}

interface Head {
  kind: string;
  name: string;
  annotations: Record<string, string>;
}

/** Helm's SimpleHead; every scalar read as text, as Helm's YAML-to-struct decoding does for strings. */
function headOf(doc: string, path: string): Head {
  const parsed = parseDocument(doc, { schema: 'failsafe', uniqueKeys: false });
  if (parsed.errors.length)
    throw new RenderSplitError(`YAML parse error on ${path}: ${parsed.errors[0]?.message}`);
  const js = parsed.toJS({ maxAliasCount: 100 }) as unknown;
  const obj = js && typeof js === 'object' && !Array.isArray(js) ? (js as Record<string, unknown>) : {};
  const meta =
    obj.metadata && typeof obj.metadata === 'object' ? (obj.metadata as Record<string, unknown>) : {};
  const annotations: Record<string, string> = {};
  if (meta.annotations && typeof meta.annotations === 'object') {
    for (const [k, v] of Object.entries(meta.annotations as Record<string, unknown>)) {
      if (typeof v === 'string') annotations[k] = v;
    }
  }
  return {
    kind: typeof obj.kind === 'string' ? obj.kind : '',
    name: typeof meta.name === 'string' ? meta.name : '',
    annotations,
  };
}

const listOf = (value: string): string[] => value.split(',').map((v) => v.trim().toLowerCase());

/** Helm's calculateHookWeight: strconv.Atoi of the annotation, 0 when it is not an integer. */
function weightOf(value: string | undefined): number {
  if (value === undefined || !/^[+-]?[0-9]+$/.test(value)) return 0;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : 0;
}

/** The hook a document declares, undefined for a plain manifest, null for one Helm skips. */
function hookOf(head: Head, path: string, doc: string): HookRecord | undefined | null {
  const declared = head.annotations['helm.sh/hook'];
  if (declared === undefined) return undefined;
  const events: HookEvent[] = [];
  for (const e of listOf(declared)) {
    const event = EVENTS[e];
    if (!event) return null; // Helm logs "skipping unknown hook" and drops the document
    events.push(event);
  }
  const hook: HookRecord = {
    name: head.name,
    kind: head.kind,
    path,
    manifest: doc,
    events,
    last_run: { started_at: '', completed_at: '', phase: '' },
  };
  const weight = weightOf(head.annotations['helm.sh/hook-weight']);
  if (weight) hook.weight = weight;
  const del = head.annotations['helm.sh/hook-delete-policy'];
  if (del !== undefined) hook.delete_policies = listOf(del) as HookDeletePolicy[];
  const log = head.annotations['helm.sh/hook-output-log-policy'];
  if (log !== undefined) hook.output_log_policies = listOf(log) as HookOutputLogPolicy[];
  return hook;
}

/**
 * Splits a rendered stream into the release's manifest (the non-hook documents, exactly as Helm
 * stores Release.Manifest) and its hooks, in the order Helm records them (by kind, as rendered).
 * A hook's declared delete policies are kept as declared: Helm writes its default,
 * `before-hook-creation`, into the record only when the hook runs (see deletePoliciesOf).
 */
export function splitRender(stream: string): SplitRender {
  let manifest = '';
  const hooks: HookRecord[] = [];
  for (const doc of documents(stream)) {
    const source = SOURCE.exec(doc);
    if (!source?.[1])
      throw new RenderSplitError(
        `a rendered document has no "# Source:" line, so the stream is not one Helm printed: ${JSON.stringify(doc.slice(0, 60))}`,
      );
    const path = source[1];
    const content = doc.slice(source[0].length).trim();
    if (content === '') continue;
    const hook = hookOf(headOf(content, path), path, content);
    if (hook === undefined) manifest += `---\n# Source: ${path}\n${content}\n`;
    else if (hook) hooks.push(hook);
  }
  return { manifest, hooks };
}

/**
 * The hooks that run on `event`, in Helm's execution order (action/hooks.go execHook): by weight,
 * then by name, otherwise in the recorded (kind) order.
 */
export function hooksFor(hooks: readonly HookRecord[], event: HookEvent): HookRecord[] {
  return hooks
    .filter((h) => h.events?.includes(event))
    .sort((a, b) => {
      const wa = a.weight ?? 0;
      const wb = b.weight ?? 0;
      if (wa !== wb) return wa - wb;
      const na = a.name ?? '';
      const nb = b.name ?? '';
      return na < nb ? -1 : na > nb ? 1 : 0;
    });
}

/** The delete policies a hook runs with: its own, else Helm 3's default before-hook-creation. */
export function deletePoliciesOf(hook: HookRecord): HookDeletePolicy[] {
  return hook.delete_policies?.length ? [...hook.delete_policies] : ['before-hook-creation'];
}
