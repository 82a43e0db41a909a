import {
  HELM_API_VERSION,
  HELM_NAME_LABEL,
  HELM_NAMESPACE_LABEL,
  type HelmRelease,
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
  type ResourceInventory,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';

/** The two kinds that apply objects and list them in `status.inventory`. */
export type ApplierKind = 'Kustomization' | 'HelmRelease';

/** A Kustomization or HelmRelease as `trace` reads it. */
export type Applier = (Kustomization | HelmRelease) &
  KubeObject & { status?: { inventory?: ResourceInventory } };

/** The applier named by an object's owner labels, and what the cluster says about it. */
export interface OwnerLink {
  kind: ApplierKind;
  namespace: string;
  name: string;
  /** Undefined when no such object exists. */
  applier?: Applier;
  /** Whether its `status.inventory` lists the object: labels alone can be copied by hand. */
  listed: boolean;
  /** The object is one of the release's Helm hooks (`helm.sh/hook`), which no inventory lists. */
  hook?: string;
}

/** A source an owner reads from: a Kustomization's `spec.sourceRef`, a HelmRelease's chart, a HelmChart's source. */
export interface SourceLink {
  kind: string;
  namespace: string;
  name: string;
  /** Undefined when no such source exists. */
  source?: KubeObject;
}

/** One object on the way up: the traced object first, then each applier that manages the one before. */
export interface TraceStep {
  object: KubeObject;
  /** Undefined when the object carries no owner labels: the top of the chain. */
  owner?: OwnerLink;
  /** The owner's source (for a HelmRelease: its HelmChart or OCIRepository), when the owner exists. */
  source?: SourceLink;
  /** When `source` is a HelmChart: the GitRepository, HelmRepository or OCIRepository it packages from. */
  chartSource?: SourceLink;
}

const HELM_HOOK_ANNOTATION = 'helm.sh/hook';

/**
 * The applier an object's owner labels name: a HelmRelease's labels first (a chart's objects),
 * else a Kustomization's.
 */
export function ownerLabels(
  obj: KubeObject,
): { kind: ApplierKind; namespace: string; name: string } | undefined {
  const labels = obj.metadata.labels ?? {};
  const helmName = labels[HELM_NAME_LABEL];
  const helmNamespace = labels[HELM_NAMESPACE_LABEL];
  if (helmName && helmNamespace) return { kind: 'HelmRelease', namespace: helmNamespace, name: helmName };
  const name = labels[KUSTOMIZE_NAME_LABEL];
  const namespace = labels[KUSTOMIZE_NAMESPACE_LABEL];
  return name && namespace ? { kind: 'Kustomization', namespace, name } : undefined;
}

/** The inventory id of a live object, `<namespace>_<name>_<group>_<kind>` as the kustomize operator writes it. */
export function inventoryIdOf(obj: KubeObject): string {
  const slash = obj.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : obj.apiVersion.slice(0, slash);
  return `${obj.metadata.namespace ?? ''}_${obj.metadata.name ?? ''}_${group}_${obj.kind}`;
}

function listsObject(applier: Applier, obj: KubeObject): boolean {
  const id = inventoryIdOf(obj);
  return (applier.status?.inventory?.entries ?? []).some((e) => e.id === id);
}

async function linkTo(
  client: KubeClient,
  ref: { kind: string; namespace: string; name: string; apiVersion?: string },
): Promise<SourceLink> {
  const source = await client.getOrUndefined({
    apiVersion: ref.apiVersion ?? SOURCE_API_VERSION,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
  });
  return { kind: ref.kind, namespace: ref.namespace, name: ref.name, source };
}

/** A Kustomization's source; a HelmRelease's chart (its chartRef, or the HelmChart the operator keeps for spec.chart). */
async function sourceOf(
  client: KubeClient,
  owner: OwnerLink,
  applier: Applier,
): Promise<SourceLink | undefined> {
  const own = applier.metadata.namespace ?? '';
  if (owner.kind === 'Kustomization') {
    const ref = (applier as Kustomization).spec.sourceRef;
    return linkTo(client, { ...ref, namespace: ref.namespace ?? own });
  }
  const { chartSourceOf } = await import('@mooring/kustomize-operator/helm-release');
  try {
    return await linkTo(client, chartSourceOf(applier as HelmRelease));
  } catch {
    return undefined; // neither chart nor chartRef: the HelmRelease's own status says so
  }
}

/** The source a HelmChart packages its chart from, in the HelmChart's namespace. */
async function chartSourceOf(
  client: KubeClient,
  link: SourceLink | undefined,
): Promise<SourceLink | undefined> {
  if (link?.kind !== 'HelmChart' || !link.source) return undefined;
  const ref = (link.source.spec as { sourceRef?: { kind: string; name: string } } | undefined)?.sourceRef;
  return ref ? linkTo(client, { kind: ref.kind, name: ref.name, namespace: link.namespace }) : undefined;
}

/**
 * Follows owner labels from `obj` up through every Kustomization or HelmRelease that manages the
 * one before, stopping at an object without labels, a missing applier, or a cycle.
 */
export async function traceChain(client: KubeClient, obj: KubeObject): Promise<TraceStep[]> {
  const steps: TraceStep[] = [];
  const seen = new Set<string>();
  let current: KubeObject | undefined = obj;
  while (current) {
    // An applier labelled as its own manager, or a loop of them, would never end.
    const id = inventoryIdOf(current);
    if (seen.has(id)) break;
    seen.add(id);
    const labels = ownerLabels(current);
    if (!labels) {
      steps.push({ object: current });
      break;
    }
    const applier = await client.getOrUndefined<Applier>({
      apiVersion: labels.kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : HELM_API_VERSION,
      ...labels,
    });
    const hook =
      labels.kind === 'HelmRelease' ? current.metadata.annotations?.[HELM_HOOK_ANNOTATION] : undefined;
    const owner: OwnerLink = {
      ...labels,
      applier,
      listed: applier ? listsObject(applier, current) : false,
      ...(hook ? { hook } : {}),
    };
    const source = applier ? await sourceOf(client, owner, applier) : undefined;
    const chartSource = await chartSourceOf(client, source);
    steps.push({ object: current, owner, source, ...(chartSource ? { chartSource } : {}) });
    current = applier;
  }
  return steps;
}
