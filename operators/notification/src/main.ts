// The notification operator as its own process: `node --import tsx operators/notification/src/main.ts --kubeconfig <path>`.
import { operatorMain } from '@mooring/runtime';
import { notificationOperator } from './operator.ts';

process.exit(await operatorMain({ program: 'mooring-notification', operators: [notificationOperator()] }));
