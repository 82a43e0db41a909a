// The Kustomization render as one list of steps, shared by the operator and `mooring build|diff
// kustomization` (exported as @mooring/kustomize-operator/render).
export { ARTIFACT_FAILED, ArtifactCache, artifactSource, type RenderInputs } from './artifact-source.ts';
export { RenderCache } from './cache.ts';
export { canonicalJSON, renderKey, renderKeyMaterial } from './cache-key.ts';
export {
  defaultHelmRenderLimits,
  type HelmCapabilities,
  type HelmRenderLimits,
  type HelmRenderSettings,
  helmRenderer,
} from './helm-renderer.ts';
export {
  decryptionOf,
  overridesOf,
  RenderObjectNotFoundError,
  renderSpecOf,
  substitutionOf,
} from './inputs.ts';
export {
  BUILD_FAILED,
  buildStep,
  decrypt,
  folderSource,
  label,
  type Rendered,
  type RenderSpec,
  type RenderState,
  type RenderStep,
  refuseCiphertext,
  renderSteps,
  runRender,
  substitute,
} from './pipeline.ts';
