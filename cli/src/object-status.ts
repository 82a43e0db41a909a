import type { KubeObject } from '@mooring/runtime';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** The object's Ready condition, if it has one. */
export function readyCondition(obj: KubeObject): Condition | undefined {
  const status = obj.status as { conditions?: Condition[] } | undefined;
  return status?.conditions?.find((c) => c.type === 'Ready');
}

/** The revision a user cares about for each kind: artifact, applied revision, or latest image. */
export function revisionOf(obj: KubeObject): string {
  const s = (obj.status ?? {}) as {
    artifact?: { revision?: string };
    lastAppliedRevision?: string;
    latestRef?: { name?: string; tag?: string };
    lastScanResult?: { tagCount?: number };
    lastPushCommit?: string;
  };
  if (s.artifact?.revision) return s.artifact.revision;
  if (s.lastAppliedRevision) return s.lastAppliedRevision;
  if (s.latestRef?.tag) return `${s.latestRef.name ?? ''}:${s.latestRef.tag}`;
  if (s.lastScanResult?.tagCount !== undefined) return `${s.lastScanResult.tagCount} tags`;
  if (s.lastPushCommit) return s.lastPushCommit.slice(0, 12);
  return '';
}

/** The row `get` prints: revision, suspended, ready, message. */
export function statusRow(obj: KubeObject): {
  revision: string;
  suspended: string;
  ready: string;
  message: string;
} {
  const ready = readyCondition(obj);
  const spec = (obj.spec ?? {}) as { suspend?: boolean };
  return {
    revision: revisionOf(obj),
    suspended: spec.suspend ? 'True' : 'False',
    ready: ready?.status ?? 'Unknown',
    message: (ready?.message ?? '').replace(/\s+/g, ' '),
  };
}

/** Left-aligned columns separated by three spaces, like kubectl's. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

/** The source a Kustomization's Ready message says has no artifact, worded as the kustomize operator words it. */
export function sourceWithoutArtifact(
  message: string,
): { kind: string; namespace: string; name: string } | undefined {
  const m = /^(GitRepository|OCIRepository) ([^/\s]+)\/(\S+) has no artifact yet$/.exec(message.trim());
  return m ? { kind: m[1]!, namespace: m[2]!, name: m[3]! } : undefined;
}

/**
 * A Kustomization's "GitRepository ns/x has no artifact yet" with the reason the source gives, so
 * the line says why (authentication required, repository not found) and not only that. `source`
 * is the object the message names, undefined when it does not exist; other messages are returned
 * as they are.
 */
export function withSourceReason(message: string, source: KubeObject | undefined): string {
  if (!sourceWithoutArtifact(message)) return message;
  if (!source) return `${message}: it does not exist`;
  const ready = readyCondition(source);
  if (!ready) return `${message}: it has not been reconciled yet (is the source operator running?)`;
  if (ready.status === 'True' || !ready.message) return message;
  return `${message}: ${ready.message.replace(/\s+/g, ' ')}`;
}
