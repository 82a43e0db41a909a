import { type Alert, NOTIFICATION_API_VERSION } from '@mooring/api';
import { ApiError, type KubeClient, RetryableError, StalledError, type Step, step } from '@mooring/runtime';
import { compilePatterns } from './alert-matcher.ts';

/** One reconcile of one Alert: what its steps read. */
export interface AlertRun {
  readonly obj: Alert;
  readonly client: Pick<KubeClient, 'get'>;
  readonly noCrossNamespaceRefs: boolean;
  readonly namespace: string;
  /** How messages name the Alert: `Alert <namespace>/<name>`. */
  readonly id: string;
}

/** The inclusion and exclusion patterns compile; Stalled InvalidConfig otherwise. */
export function compileAlertPatterns(run: AlertRun): undefined {
  const { spec } = run.obj;
  for (const [field, list] of [
    ['inclusionList', spec.inclusionList],
    ['exclusionList', spec.exclusionList],
  ] as const) {
    const compiled = compilePatterns(list, field);
    if (typeof compiled === 'string') throw new StalledError('InvalidConfig', `${run.id}: ${compiled}`);
  }
  return undefined;
}

/** With cross-namespace references off, every event source is in the Alert's namespace. */
export function checkEventSources(run: AlertRun): undefined {
  if (!run.noCrossNamespaceRefs) return undefined;
  const other = run.obj.spec.eventSources.find((s) => s.namespace && s.namespace !== run.namespace);
  if (other)
    throw new StalledError(
      'AccessDenied',
      `${run.id}: event source ${other.kind} ${other.namespace}/${other.name} is in another namespace and cross-namespace references are disabled`,
    );
  return undefined;
}

/** The Provider `spec.providerRef` names exists; Retryable ProviderNotFound otherwise. */
export async function checkProvider(run: AlertRun): Promise<undefined> {
  const providerName = run.obj.spec.providerRef.name;
  try {
    await run.client.get({
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Provider',
      namespace: run.namespace,
      name: providerName,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new RetryableError('ProviderNotFound', `${run.id}: Provider ${providerName} was not found`);
    throw err;
  }
  return undefined;
}

/** An Alert's reconcile; docs/architecture.md lists the same steps. */
export const ALERT_STEPS: readonly Step<AlertRun>[] = [
  step('compile patterns', compileAlertPatterns),
  step('check event sources', checkEventSources),
  step('check provider', checkProvider),
];
