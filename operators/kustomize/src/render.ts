// The render's home is ./render/ (a list of steps the CLI shares); these names stay importable from here.
export {
  ARTIFACT_FAILED,
  ArtifactCache,
  BUILD_FAILED,
  overridesOf,
  RenderCache,
  type Rendered,
  type RenderInputs,
  renderKey,
} from './render/index.ts';
