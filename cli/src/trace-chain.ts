import {
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';

/** A Kustomization named by an object's owner labels, and what the cluster says about it. */
export interface OwnerLink {
  namespace: string;
  name: string;
  /** Undefined when no such Kustomization exists. */
  kustomization?: Kustomization & KubeObject;
  /** Whether its `status.inventory` lists the object: labels alone can be copied by hand. */
  listed: boolean;
}

/** The source a Kustomization's `spec.sourceRef` names. */
export interface SourceLink {
  kind: string;
  namespace: string;
  name: string;
  /** Undefined when no such source exists. */
  source?: KubeObject;
}

/** One object on the way up: the traced object first, then each Kustomization that manages the one before. */
export interface TraceStep {
  object: KubeObject;
  /** Undefined when the object carries no owner labels: the top of the chain. */
  owner?: OwnerLink;
  /** The owner's source, when the owner exists. */
  source?: SourceLink;
}

/** The Kustomization the owner labels name, if the object has them. */
export function ownerLabels(obj: KubeObject): { namespace: string; name: string } | undefined {
  const labels = obj.metadata.labels ?? {};
  const name = labels[KUSTOMIZE_NAME_LABEL];
  const namespace = labels[KUSTOMIZE_NAMESPACE_LABEL];
  return name && namespace ? { namespace, name } : undefined;
}

/** The inventory id of a live object, `<namespace>_<name>_<group>_<kind>` as the kustomize operator writes it. */
export function inventoryIdOf(obj: KubeObject): string {
  const slash = obj.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : obj.apiVersion.slice(0, slash);
  return `${obj.metadata.namespace ?? ''}_${obj.metadata.name ?? ''}_${group}_${obj.kind}`;
}

function listsObject(ks: Kustomization, obj: KubeObject): boolean {
  const id = inventoryIdOf(obj);
  return (ks.status?.inventory?.entries ?? []).some((e) => e.id === id);
}

async function sourceOf(client: KubeClient, ks: Kustomization & KubeObject): Promise<SourceLink> {
  const ref = ks.spec.sourceRef;
  const namespace = ref.namespace ?? ks.metadata.namespace ?? '';
  const source = await client.getOrUndefined({
    apiVersion: ref.apiVersion ?? SOURCE_API_VERSION,
    kind: ref.kind,
    namespace,
    name: ref.name,
  });
  return { kind: ref.kind, namespace, name: ref.name, source };
}

/**
 * Follows owner labels from `obj` up through every Kustomization that manages the one before,
 * stopping at an object without labels, a missing Kustomization, or a cycle.
 */
export async function traceChain(client: KubeClient, obj: KubeObject): Promise<TraceStep[]> {
  const steps: TraceStep[] = [];
  const seen = new Set<string>();
  let current: KubeObject | undefined = obj;
  while (current) {
    // A Kustomization labelled as its own manager, or a loop of them, would never end.
    const id = inventoryIdOf(current);
    if (seen.has(id)) break;
    seen.add(id);
    const labels = ownerLabels(current);
    if (!labels) {
      steps.push({ object: current });
      break;
    }
    const kustomization = await client.getOrUndefined<Kustomization & KubeObject>({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      ...labels,
    });
    const listed = kustomization ? listsObject(kustomization, current) : false;
    const source = kustomization ? await sourceOf(client, kustomization) : undefined;
    steps.push({ object: current, owner: { ...labels, kustomization, listed }, source });
    current = kustomization;
  }
  return steps;
}
