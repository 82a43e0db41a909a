import type { Kustomization } from '@mooring/api';
import { type CompiledExpression, compileExpression } from './cel.ts';

interface HealthRule {
  group: string;
  kind: string | undefined;
  current: CompiledExpression;
  inProgress: CompiledExpression | undefined;
  failed: CompiledExpression | undefined;
}

export interface HealthExpressions {
  rules: HealthRule[];
}

type HealthCheckExprs = NonNullable<Kustomization['spec']['healthCheckExprs']>;

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** Compiles `spec.healthCheckExprs`; a bad expression throws CelError before anything is applied. */
export function compileHealthExprs(exprs: HealthCheckExprs): HealthExpressions {
  return {
    rules: exprs.map((e) => ({
      group: groupOf(e.apiVersion),
      kind: e.kind,
      current: compileExpression(e.current),
      inProgress: e.inProgress ? compileExpression(e.inProgress) : undefined,
      failed: e.failed ? compileExpression(e.failed) : undefined,
    })),
  };
}

/**
 * Custom health of an object whose group (and kind, when given; the version is ignored) matches
 * a rule: `inProgress`, then `failed`, then `current`, as Flux evaluates them. Undefined when no
 * rule matches, so the caller falls back to kstatus.
 */
export function evaluateHealth(
  h: HealthExpressions,
  obj: Record<string, unknown>,
): { status: 'InProgress' | 'Failed' | 'Current'; message: string } | undefined {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const rule = h.rules.find(
    (r) => r.group === groupOf(apiVersion) && (r.kind === undefined || r.kind === kind),
  );
  if (!rule) return undefined;
  const vars = { self: obj };
  if (rule.inProgress?.evaluate(vars))
    return { status: 'InProgress', message: `inProgress: ${rule.inProgress.source}` };
  if (rule.failed?.evaluate(vars)) return { status: 'Failed', message: `failed: ${rule.failed.source}` };
  if (rule.current.evaluate(vars)) return { status: 'Current', message: `current: ${rule.current.source}` };
  return { status: 'InProgress', message: `waiting for: ${rule.current.source}` };
}
