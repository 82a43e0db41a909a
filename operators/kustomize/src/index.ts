export { KUSTOMIZE_FLAGS, kustomizeOperator } from './kustomize-operator.ts';
