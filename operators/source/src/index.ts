export { DEFAULT_EXCLUSIONS, loadExclusionFilter } from './ignore-rules.ts';
export { SOURCE_FLAGS, type SourceOptions, sourceOptions } from './source-flags.ts';
export { ARTIFACT_LIMITS, sourceOperator } from './source-operator.ts';
