// The image-automation operator as its own process:
// `node --import tsx operators/image-automation/src/main.ts --kubeconfig <path>`.
import { operatorMain } from '@mooring/runtime';
import { imageAutomationOperator } from './image-automation-operator.ts';

process.exit(
  await operatorMain({ program: 'mooring-image-automation', operators: [imageAutomationOperator()] }),
);
