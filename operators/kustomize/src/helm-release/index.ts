// What `mooring build|diff helmrelease` need to render a release as the operator would (exported
// as @mooring/kustomize-operator/helm-release): names, values in Flux's order, the render with
// post-renderers, and the ownership marks the apply adds.
export { chartFolderIn, chartSourceOf, fetchChart, helmChartFor } from './chart-source.ts';
export type { ReleaseManifest, ResolvedChart } from './helm-release-run.ts';
export { helmChartNameOf, placementOf, type ReleasePlacement } from './release-names.ts';
export {
  objectsOf,
  type ReleaseRenderRequest,
  releaseFromRecord,
  renderRelease,
  withOwnership,
} from './render-release.ts';
export { snapshotOf } from './steps/record-status.ts';
export {
  composeValues,
  configDigest,
  mergeValues,
  setAtPath,
  ValuesError,
  type ValuesObjectReader,
} from './values.ts';
