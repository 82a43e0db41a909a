import { stringField } from './fields.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for Service: only a LoadBalancer without a cluster IP waits; an ingress IP is not awaited. */
export function serviceStatus(object: LiveObject): StatusResult {
  const type = stringField(object, 'spec.type', 'ClusterIP');
  if (type === 'LoadBalancer' && stringField(object, 'spec.clusterIP') === '') {
    return inProgress('NoIPAssigned', 'ClusterIP not set. Service type: LoadBalancer');
  }
  return current('Service is ready');
}
