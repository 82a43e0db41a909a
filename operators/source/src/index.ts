export { sourceOperator } from './source-operator.ts';
