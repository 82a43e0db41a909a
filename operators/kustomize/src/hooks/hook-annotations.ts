// Which rendered objects of a Kustomization are hooks, and their delete policies: Mooring's
// annotations, and Argo CD's mapped onto them for migration (docs/decisions.md).
import type { Manifest } from '../apply/object-policy.ts';
import type { HookDeletePolicy } from './hook-runner.ts';

export const HOOK_ANNOTATION = 'mooring.dev/hook';
export const HOOK_DELETE_POLICY_ANNOTATION = 'mooring.dev/hook-delete-policy';
export const ARGO_HOOK_ANNOTATION = 'argocd.argoproj.io/hook';
export const ARGO_HOOK_DELETE_POLICY_ANNOTATION = 'argocd.argoproj.io/hook-delete-policy';

/** The points of a reconcile where hooks run. */
export const HOOK_PHASES = ['pre-apply', 'post-apply', 'on-failure'] as const;
export type HookPhase = (typeof HOOK_PHASES)[number];

/**
 * Argo CD's hook types: PreSync, PostSync and SyncFail are Mooring's phases; Sync objects are
 * applied with the revision's regular objects (in their wave); Skip objects are not applied at all.
 */
const ARGO_HOOKS: Record<string, HookPhase | 'regular' | 'skip'> = {
  PreSync: 'pre-apply',
  Sync: 'regular',
  PostSync: 'post-apply',
  SyncFail: 'on-failure',
  Skip: 'skip',
};

const DELETE_POLICIES: readonly HookDeletePolicy[] = [
  'before-hook-creation',
  'hook-succeeded',
  'hook-failed',
];
const ARGO_DELETE_POLICIES: Record<string, HookDeletePolicy> = {
  BeforeHookCreation: 'before-hook-creation',
  HookSucceeded: 'hook-succeeded',
  HookFailed: 'hook-failed',
};

/** What an object's annotations make it: a hook of some phases, a regular object, or nothing to apply. */
export type HookRole =
  | { role: 'regular' }
  | { role: 'skip' }
  | { role: 'hook'; phases: HookPhase[]; policies: HookDeletePolicy[] };

const list = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

/**
 * Reads the hook annotations of one object; throws a one-sentence Error naming the annotation and
 * the values it accepts. Mooring's annotation wins over Argo CD's when both are set; without a
 * delete policy a hook has before-hook-creation, as in Helm and Argo CD.
 */
export function hookRoleOf(obj: Manifest): HookRole {
  const annotations = obj.metadata.annotations ?? {};
  const own = annotations[HOOK_ANNOTATION];
  const argo = annotations[ARGO_HOOK_ANNOTATION];
  let phases: HookPhase[];
  if (own !== undefined) {
    const values = list(own);
    const bad = values.filter((v) => !(HOOK_PHASES as readonly string[]).includes(v));
    if (values.length === 0 || bad.length)
      throw new Error(
        `${HOOK_ANNOTATION}: '${own}' is not one of ${HOOK_PHASES.join(', ')} (a comma-separated list)`,
      );
    phases = values as HookPhase[];
  } else if (argo !== undefined) {
    const values = list(argo);
    const bad = values.filter((v) => !(v in ARGO_HOOKS));
    if (values.length === 0 || bad.length)
      throw new Error(
        `${ARGO_HOOK_ANNOTATION}: '${argo}' is not one of ${Object.keys(ARGO_HOOKS).join(', ')} (PostDelete is not supported)`,
      );
    const mapped = values.map((v) => ARGO_HOOKS[v]!);
    if (mapped.includes('skip')) return { role: 'skip' };
    phases = mapped.filter((m): m is HookPhase => m !== 'regular');
    // Sync alone, or Sync with other types: the object is also applied as a regular one in Argo;
    // here it is one or the other, and a hook phase is the stronger statement.
    if (phases.length === 0) return { role: 'regular' };
  } else {
    return { role: 'regular' };
  }
  return { role: 'hook', phases: [...new Set(phases)], policies: deletePoliciesOf(obj) };
}

function deletePoliciesOf(obj: Manifest): HookDeletePolicy[] {
  const annotations = obj.metadata.annotations ?? {};
  const own = annotations[HOOK_DELETE_POLICY_ANNOTATION];
  const argo = annotations[ARGO_HOOK_DELETE_POLICY_ANNOTATION];
  let policies: HookDeletePolicy[];
  if (own !== undefined) {
    const values = list(own);
    const bad = values.filter((v) => !(DELETE_POLICIES as readonly string[]).includes(v));
    if (bad.length)
      throw new Error(
        `${HOOK_DELETE_POLICY_ANNOTATION}: '${own}' is not a list of ${DELETE_POLICIES.join(', ')}`,
      );
    policies = values as HookDeletePolicy[];
  } else if (argo !== undefined) {
    const values = list(argo);
    const bad = values.filter((v) => !(v in ARGO_DELETE_POLICIES));
    if (bad.length)
      throw new Error(
        `${ARGO_HOOK_DELETE_POLICY_ANNOTATION}: '${argo}' is not a list of ${Object.keys(ARGO_DELETE_POLICIES).join(', ')}`,
      );
    policies = values.map((v) => ARGO_DELETE_POLICIES[v]!);
  } else {
    policies = [];
  }
  return policies.length ? [...new Set(policies)] : ['before-hook-creation'];
}
