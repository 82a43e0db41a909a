export { applyJson6902 } from './json-patch.ts';
export type { ListMergeInfo, OpenApiDocument, PatchSchema } from './schema.ts';
export { schemaFor } from './schema.ts';
export type { StrategicMergeOptions } from './strategic-merge.ts';
export { strategicMerge } from './strategic-merge.ts';
