import { field, findCondition, stringField } from './fields.ts';
import { current, failed, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** How long a pod may stay unschedulable before it counts as Failed (cli-utils' ScheduleWindow). */
export const SCHEDULE_WINDOW_MS = 15_000;

/** kstatus for Pod: finished or Running and Ready is Current; crash loops and lasting unschedulability fail. */
export function podStatus(object: LiveObject, now: Date): StatusResult {
  const phase = stringField(object, 'status.phase');
  switch (phase) {
    case 'Succeeded':
      return current('Pod has completed successfully');
    case 'Failed':
      return current('Pod has completed, but not successfully');
    case 'Running': {
      if (findCondition(object, 'Ready')?.status === 'True') return current('Pod is Ready');
      const looping = crashLoopingContainers(object);
      if (looping.length > 0) {
        return failed('ContainerCrashLooping', `Containers in CrashLoop state: ${looping.join(',')}`);
      }
      return inProgress('PodRunningNotReady', 'Pod is running but is not Ready');
    }
    case 'Pending': {
      const scheduled = findCondition(object, 'PodScheduled');
      if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
        const created = Date.parse(stringField(object, 'metadata.creationTimestamp'));
        // An unparsable timestamp counts as old: Go's zero time is long before the window too.
        if (Number.isFinite(created) && now.getTime() - SCHEDULE_WINDOW_MS < created) {
          return inProgress('PodNotScheduled', 'Pod has not been scheduled');
        }
        return failed('PodUnschedulable', 'Pod could not be scheduled');
      }
      return inProgress('PodPending', 'Pod is in the Pending phase');
    }
    case '':
      return inProgress('PodNotObserved', 'Pod phase not available');
    default:
      // cli-utils returns an error here, which its pollers report as Unknown.
      return { status: 'Unknown', reason: 'UnknownPhase', message: `Pod has the unknown phase ${phase}` };
  }
}

function crashLoopingContainers(object: LiveObject): string[] {
  const statuses = field(object, 'status.containerStatuses');
  if (!Array.isArray(statuses)) return [];
  return statuses.flatMap((cs: unknown): string[] => {
    if (typeof cs !== 'object' || cs === null) return [];
    const entry = cs as LiveObject;
    const name = entry.name;
    return typeof name === 'string' && field(entry, 'state.waiting.reason') === 'CrashLoopBackOff'
      ? [name]
      : [];
  });
}
