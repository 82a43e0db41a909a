// The render's home is ./render/ (a list of steps the CLI shares); the operator's modules import these from here.
export { ArtifactCache, RenderCache, type Rendered, type RenderInputs } from './render/index.ts';
