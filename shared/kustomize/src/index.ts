export type { BuildLimits, BuildOptions } from './build.ts';
export { build, defaultBuildLimits } from './build.ts';
export type { ConfinedFs, FsLimits } from './confined-fs.ts';
export { createConfinedFs, defaultFsLimits } from './confined-fs.ts';
export { toYAML } from './emit.ts';
export { KustomizeError } from './errors.ts';
export type { KustomizationOverrides } from './flux-generator.ts';
export type { Kustomization } from './kustomization-file.ts';
export type { JsonObject, JsonValue, ResId, Resource } from './resource.ts';
