// The source operator as its own process: `node --import tsx operators/source/src/main.ts --kubeconfig <path>`.
import { operatorMain } from '@mooring/runtime';
import { sourceOperator } from './source-operator.ts';

process.exit(await operatorMain({ program: 'mooring-source', operators: [sourceOperator()] }));
