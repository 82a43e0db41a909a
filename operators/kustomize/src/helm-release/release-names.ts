import {
  type HelmRelease,
  releaseNameOf,
  releaseStorageNamespace,
  releaseTargetNamespace,
} from '@mooring/api';

/** Where a HelmRelease's release lives and is named, as Flux names it. */
export interface ReleasePlacement {
  /** `spec.releaseName`, else `[<targetNamespace>-]<name>`. */
  releaseName: string;
  /** Where the objects go: targetNamespace, else the HelmRelease's namespace. */
  targetNamespace: string;
  /** Where the release records live: storageNamespace ?? targetNamespace ?? the HelmRelease's. */
  storageNamespace: string;
}

export function placementOf(obj: HelmRelease): ReleasePlacement {
  return {
    releaseName: releaseNameOf(obj),
    targetNamespace: releaseTargetNamespace(obj),
    storageNamespace: releaseStorageNamespace(obj),
  };
}

/** The HelmChart the operator makes for `spec.chart`: `<namespace>-<name>` in the source's namespace. */
export function helmChartNameOf(obj: HelmRelease): { namespace: string; name: string } | undefined {
  const tpl = obj.spec.chart;
  if (!tpl) return undefined;
  const own = obj.metadata.namespace ?? 'default';
  return { namespace: tpl.spec.sourceRef.namespace ?? own, name: `${own}-${obj.metadata.name}` };
}
