// What a KustomizationSet needs to know of the kind its template makes: where it lives, how its
// rendered spec is checked, how its cluster Secret is named, and when it stands "at this revision".
// One description per kind, so the steps never ask which kind they hold.
import {
  HELM_API_VERSION,
  type HelmRelease,
  helmReleaseSpecError,
  KUSTOMIZATION_SET_REVISION_ANNOTATION,
  KUSTOMIZE_API_VERSION,
  type Kustomization,
  type KustomizationTemplate,
  kustomizationSpecError,
  SET_MEMBER_API_VERSIONS,
  SET_MEMBER_KINDS,
  type SetMemberKind,
} from '@mooring/api';
import type { LiveState } from './plan-rollout.ts';
import { TemplateError } from './template.ts';

/** A generated object as the set reads it: metadata, a spec naming its cluster, a status. */
export type MemberObject = Kustomization | HelmRelease;

export interface MemberKind {
  apiVersion: string;
  kind: SetMemberKind;
  /** The first reason a rendered spec is not valid for this kind, else undefined. */
  specError(spec: unknown): string | undefined;
  /** Where the object stands for the rollout planner. */
  liveState(obj: MemberObject): LiveState;
}

type ReadyCondition = { status: 'True' | 'False' | 'Unknown'; message: string; observedGeneration?: number };

/** The Ready condition when it speaks of the object's current generation, else undefined. */
function readyAtGeneration(obj: MemberObject): ReadyCondition | undefined {
  const ready = obj.status?.conditions?.find((c) => c.type === 'Ready') as ReadyCondition | undefined;
  const generation = obj.metadata.generation ?? 0;
  return ready && (ready.observedGeneration ?? -1) === generation ? ready : undefined;
}

const baseState = (obj: MemberObject) => ({
  revision: obj.metadata.annotations?.[KUSTOMIZATION_SET_REVISION_ANNOTATION],
  generation: obj.metadata.generation ?? 0,
});

export const KUSTOMIZATION_MEMBER: MemberKind = {
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'Kustomization',
  specError: kustomizationSpecError,
  liveState(obj) {
    const k = obj as Kustomization;
    const ready = readyAtGeneration(k);
    return {
      ...baseState(k),
      ready: ready ? { status: ready.status, message: ready.message } : undefined,
      ...(k.status?.lastAppliedRevision ? { appliedRevision: k.status.lastAppliedRevision } : {}),
    };
  },
};

/**
 * A HelmRelease is at this revision when its Ready speaks of the current generation and, if True,
 * its latest release is deployed with the values last attempted (the spec's): Ready at a new
 * generation alone would also be written by a pass that kept an older release, e.g. one held by a
 * user's rollback. What it applied is the latest release's <chart>@<version> and Helm version.
 */
export const HELM_RELEASE_MEMBER: MemberKind = {
  apiVersion: HELM_API_VERSION,
  kind: 'HelmRelease',
  specError: helmReleaseSpecError,
  liveState(obj) {
    const hr = obj as HelmRelease;
    const ready = readyAtGeneration(hr);
    const latest = hr.status?.history?.[0];
    // No attempt recorded: a release adopted as it was (made by helm, up to date), nothing attempted.
    const attempted = hr.status?.lastAttemptedConfigDigest;
    const released =
      latest?.status === 'deployed' && (attempted === undefined || latest.configDigest === attempted);
    const state: LiveState = {
      ...baseState(hr),
      ready:
        ready && (ready.status !== 'True' || released)
          ? { status: ready.status, message: ready.message }
          : undefined,
    };
    if (latest) {
      state.appliedRevision = `${latest.chartName}@${latest.chartVersion}`;
      state.releaseVersion = latest.version;
    }
    return state;
  },
};

const MEMBER_KINDS: Record<SetMemberKind, MemberKind> = {
  Kustomization: KUSTOMIZATION_MEMBER,
  HelmRelease: HELM_RELEASE_MEMBER,
};

/** Every member kind, for what a set may own whatever its template says now. */
export const ALL_MEMBER_KINDS: readonly MemberKind[] = SET_MEMBER_KINDS.map((k) => MEMBER_KINDS[k]);

/** The kind a template makes: its `kind` (Kustomization by default), whose apiVersion must match. */
export function memberKindOf(template: Pick<KustomizationTemplate, 'apiVersion' | 'kind'>): MemberKind {
  const kind = template.kind ?? 'Kustomization';
  const member = MEMBER_KINDS[kind];
  if (!member)
    throw new TemplateError(
      `kind ${JSON.stringify(kind)} is not one a set makes: ${SET_MEMBER_KINDS.join(', ')}`,
    );
  if (template.apiVersion !== undefined && template.apiVersion !== SET_MEMBER_API_VERSIONS[kind])
    throw new TemplateError(
      `apiVersion ${template.apiVersion} does not serve ${kind}: use ${SET_MEMBER_API_VERSIONS[kind]} or leave it out`,
    );
  return member;
}
