export { DEFAULT_COMMIT_MESSAGE, renderCommitMessage } from './commit-message.ts';
export { imageAutomationOperator } from './image-automation-operator.ts';
export { IMAGE_FLAGS, type ImageOptions, imageOptions } from './image-flags.ts';
export { filterTags, selectLatest } from './policy.ts';
export { applySetters, type PolicyImage, type SetterChange } from './setters.ts';
export { TagStore, tagSetRevision } from './tag-store.ts';
