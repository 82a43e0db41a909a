import { conditions, field, intField } from './fields.ts';
import { current, failed, inProgress, type LiveObject, type StatusResult } from './result.ts';

/**
 * kstatus for batch/Job with Flux's override (fluxcd/pkg runtime/statusreaders/job.go): a running
 * Job is InProgress, not Current as upstream says, so a health check waits for it to finish.
 * Suspended Jobs are Current, as upstream, whether told by the `Suspended` condition or by
 * `spec.suspend` before the controller has set that condition: nothing will run until resumed.
 */
export function jobStatus(object: LiveObject): StatusResult {
  const parallelism = intField(object, 'spec.parallelism', 1);
  const completions = intField(object, 'spec.completions', parallelism);
  const succeeded = intField(object, 'status.succeeded', 0);
  const failedPods = intField(object, 'status.failed', 0);
  for (const c of conditions(object)) {
    if (c.type === 'Complete' && c.status === 'True') {
      return current(`Job Completed. succeeded: ${succeeded}/${completions}`);
    }
    if (c.type === 'Failed' && c.status === 'True') {
      return failed('JobFailed', `Job Failed. failed: ${failedPods}/${completions}`);
    }
    if (c.type === 'Suspended' && c.status === 'True') return current('Job is suspended');
  }
  if (field(object, 'spec.suspend') === true) return current('Job is suspended');
  return inProgress('JobInProgress', 'Job in progress');
}
