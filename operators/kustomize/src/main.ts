// The kustomize operator as its own process: `node --import tsx operators/kustomize/src/main.ts --kubeconfig <path>`.
import { operatorMain } from '@mooring/runtime';
import { kustomizeOperator } from './kustomize-operator.ts';

process.exit(await operatorMain({ program: 'mooring-kustomize', operators: [kustomizeOperator()] }));
