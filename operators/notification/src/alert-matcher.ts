import type { Alert } from '@mooring/api';
import type { InboundEvent } from './event.ts';

/** What deciding one Alert against one event gives. */
export type MatchResult =
  | { matched: true; metadata: Record<string, string> }
  | { matched: false; why: string }
  | { matched: false; invalid: string };

export interface MatchOptions {
  noCrossNamespaceRefs: boolean;
  /** Labels of the involved object; only read when a source has matchLabels. */
  labels?: Record<string, string>;
}

/** Compiles every pattern, or says which one is not a valid regular expression. */
export function compilePatterns(patterns: readonly string[] | undefined, field: string): RegExp[] | string {
  const out: RegExp[] = [];
  for (const [i, p] of (patterns ?? []).entries()) {
    try {
      out.push(new RegExp(p));
    } catch {
      return `${field}[${i}] ${JSON.stringify(p)} is not a valid regular expression`;
    }
  }
  return out;
}

/** True when any source of the Alert names the event's object with matchLabels, so labels are needed. */
export function needsLabels(alert: Alert, event: InboundEvent): boolean {
  return alert.spec.eventSources.some(
    (s) => s.matchLabels && Object.keys(s.matchLabels).length > 0 && s.kind === event.involvedObject.kind,
  );
}

/**
 * Decides whether an event goes to an Alert's provider (Flux's event_handlers.go): the Alert is
 * not suspended; a source names the object's kind, namespace (the Alert's by default) and name
 * (or `*`), its labels when set; the severity fits; the message passes the inclusion and
 * exclusion lists. The notification's metadata is the Alert's eventMetadata, then summary, then
 * the event's own keys, so an operator's facts cannot be overridden by an Alert.
 */
export function matchAlert(event: InboundEvent, alert: Alert, options: MatchOptions): MatchResult {
  const spec = alert.spec;
  const alertNs = alert.metadata.namespace ?? '';
  const o = event.involvedObject;
  if (spec.suspend) return { matched: false, why: 'suspended' };
  if (options.noCrossNamespaceRefs && o.namespace !== alertNs)
    return { matched: false, why: 'cross-namespace events are disabled' };
  if (spec.eventSeverity === 'error' && event.severity !== 'error')
    return { matched: false, why: 'severity below the Alert’s' };
  const source = spec.eventSources.find((s) => {
    if (s.kind !== o.kind) return false;
    if ((s.namespace ?? alertNs) !== o.namespace) return false;
    if (s.name !== '*' && s.name !== o.name) return false;
    const want = Object.entries(s.matchLabels ?? {});
    return want.every(([k, v]) => options.labels?.[k] === v);
  });
  if (!source) return { matched: false, why: 'no event source names the object' };
  const include = compilePatterns(spec.inclusionList, 'inclusionList');
  if (typeof include === 'string') return { matched: false, invalid: include };
  const exclude = compilePatterns(spec.exclusionList, 'exclusionList');
  if (typeof exclude === 'string') return { matched: false, invalid: exclude };
  if (include.length > 0 && !include.some((r) => r.test(event.message)))
    return { matched: false, why: 'message matches no inclusion pattern' };
  if (exclude.some((r) => r.test(event.message)))
    return { matched: false, why: 'message matches an exclusion pattern' };
  const metadata: Record<string, string> = { ...spec.eventMetadata };
  if (spec.summary) metadata.summary = spec.summary;
  Object.assign(metadata, event.metadata);
  return { matched: true, metadata };
}
