import { KustomizeError } from '../errors.ts';
import { idOf, isSelected } from '../res-id.ts';
import type { Resource } from '../resource.ts';
import { type FieldSpec, REPLICAS_FIELD_SPECS, walkFieldSpec } from './field-specs.ts';

/** One `replicas:` entry of a kustomization. */
export interface ReplicaOverride {
  name: string;
  count: number;
}

/** Sets `spec/replicas` on workloads whose current or any previous name matches. */
export function setReplicas(
  resources: Resource[],
  replicas: ReplicaOverride[],
  fieldSpecs: FieldSpec[] = REPLICAS_FIELD_SPECS,
): void {
  for (const replica of replicas) {
    let found = false;
    for (const spec of fieldSpecs) {
      const matching = resources.filter((r) =>
        [idOf(r.object), ...r.previousIds].some((id) => id.name === replica.name && isSelected(id, spec)),
      );
      if (matching.length > 0) found = true;
      for (const resource of matching) {
        walkFieldSpec(resource.object, spec, (ref) => ref.set(replica.count), 'scalar');
      }
    }
    if (!found) {
      const gvks = fieldSpecs.map(
        (s) => `${s.kind || '[noKind]'}.${s.version || '[noVer]'}.${s.group || '[noGrp]'}`,
      );
      throw new KustomizeError(
        `resource with name ${replica.name} does not match a config with the following GVK [${gvks.join(' ')}]`,
      );
    }
  }
}
