export { Dispatcher, type DispatchOutcome } from './dispatcher.ts';
export { EventServer } from './event-server.ts';
export {
  NOTIFICATION_FLAGS,
  type NotificationPorts,
  type NotificationTuning,
  notificationOperator,
} from './operator.ts';
export { ReceiverServer } from './receiver-server.ts';
export { webhookPath } from './webhook-path.ts';
