import { conditions } from './fields.ts';
import { current, failed, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for CustomResourceDefinition: Current once Established; rejected names fail. */
export function customResourceDefinitionStatus(object: LiveObject): StatusResult {
  for (const c of conditions(object)) {
    if (c.type === 'NamesAccepted' && c.status === 'False') {
      return failed(c.reason ?? 'NamesNotAccepted', c.message ?? 'CRD names were not accepted');
    }
    if (c.type === 'Established') {
      if (c.status === 'False' && c.reason !== 'Installing') {
        return failed(c.reason ?? 'NotEstablished', c.message ?? 'CRD is not established');
      }
      if (c.status === 'True') return current('CRD is established');
    }
  }
  return inProgress('Installing', 'Install in progress');
}
