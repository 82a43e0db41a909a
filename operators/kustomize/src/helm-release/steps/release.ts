// Render, then install or upgrade as Helm does, through Mooring's apply: record version N pending,
// pre-hooks, apply (intent first), prune, wait, post-hooks, then N deployed and the one before it
// superseded. A failure records N failed and remediates as the spec says.
import { ConditionType, HELM_NAME_LABEL, HELM_NAMESPACE_LABEL, Reason } from '@mooring/api';
import { type HookEvent, helmTime, ReleaseExistsError, type ReleaseRecord } from '@mooring/helm';
import { parseDuration, RetryableError, StalledError, WaitingError } from '@mooring/runtime';
import { clusterLookup } from '../../helm-lookup.ts';
import { applyRelease, changeSummary, waitForRelease } from '../apply-release.ts';
import { cleanupFailedUpgrade } from '../cleanup-on-fail.ts';
import { type HelmReleaseRun, need, type ReleaseManifest } from '../helm-release-run.ts';
import { releaseFromRecord, renderRelease } from '../render-release.ts';
import { ensureTargetNamespace } from '../target-namespace.ts';
import { deleteReleaseObjects } from '../uninstall.ts';
import { retriesExhausted } from './read-history.ts';

const DEFAULT_MAX_HISTORY = 5;

/** The chart rendered as the next revision; nothing new to do renders nothing (the deployed record is re-applied). */
export async function render(run: HelmReleaseRun): Promise<undefined> {
  const { deps, placement } = run;
  if (run.action === 'none') {
    const deployed = need(run.deployed, 'the deployed release');
    run.rendered = releaseFromRecord(deployed.manifest ?? '', deployed.hooks);
    return undefined;
  }
  const chart = need(run.chart, 'the chart');
  const target = need(run.target, 'the target cluster');
  const isUpgrade = run.action === 'upgrade';
  const crds = isUpgrade ? (run.obj.spec.upgrade?.crds ?? 'Skip') : (run.obj.spec.install?.crds ?? 'Create');
  const started = performance.now();
  run.rendered = await renderRelease({
    chart,
    placement,
    values: need(run.values, 'the values'),
    isUpgrade,
    revision: (need(run.history, 'the history').at(-1)?.version ?? 0) + 1,
    includeCrds: crds !== 'Skip',
    limits: deps.helm.limits,
    capabilities: deps.helm.capabilities.for(target),
    lookup: clusterLookup(target, run.impersonate),
    postRenderers: run.obj.spec.postRenderers ?? [],
  });
  run.ctx.log.debug(
    { ms: Math.round(performance.now() - started), chart: `${chart.name}@${chart.version}` },
    'chart rendered',
  );
  return undefined;
}

/** Helm's release record of this reconcile, as `helm` writes it, with the HelmRelease's labels beside Helm's. */
function recordOf(
  run: HelmReleaseRun,
  version: number,
  rendered: ReleaseManifest,
  status: 'pending-install' | 'pending-upgrade' | 'pending-rollback',
  description: string,
  from?: ReleaseRecord,
): ReleaseRecord {
  const now = helmTime(run.ctx.now());
  const chart = need(run.chart, 'the chart');
  return {
    name: run.placement.releaseName,
    info: {
      first_deployed: run.deployed?.info.first_deployed || now,
      last_deployed: now,
      deleted: '',
      description,
      status,
    },
    chart: from?.chart ?? chart.record,
    config: from?.config ?? need(run.values, 'the values'),
    manifest: rendered.manifest,
    hooks: rendered.hooks ?? [],
    version,
    namespace: run.placement.targetNamespace,
    labels: { [HELM_NAME_LABEL]: run.owner.name, [HELM_NAMESPACE_LABEL]: run.owner.namespace },
  };
}

/** Runs the hooks of `event` unless disabled; a failed hook fails the action with its name. */
async function hooks(
  run: HelmReleaseRun,
  release: ReleaseManifest,
  event: HookEvent,
  disabled: boolean | undefined,
) {
  if (disabled || !release.hooks?.length) return;
  const result = await run.deps.runHooks(release.hooks, event, {
    client: need(run.target, 'the target cluster'),
    ...(run.impersonate ? { impersonate: run.impersonate } : {}),
    namespace: run.placement.targetNamespace,
    timeoutMs: run.timeoutMs,
    signal: run.signal,
    labels: { [HELM_NAME_LABEL]: run.owner.name, [HELM_NAMESPACE_LABEL]: run.owner.namespace },
    annotations: {},
  });
  if (!result.ok)
    throw new RetryableError(
      Reason.ReconciliationFailed,
      `${event} hook ${result.failed.kind}/${result.failed.name} failed: ${result.failed.message}`,
    );
}

/** A newer generation of the HelmRelease arrived while this action waited: not a failure of the chart. */
class SupersededError extends Error {
  override name = 'SupersededError';
}

type ActionOptions = {
  disableWait?: boolean;
  disableWaitForJobs?: boolean;
  disableHooks?: boolean;
  timeout?: string;
};

/** Apply, wait and the hooks around them; throws the failure as a message. */
async function perform(
  run: HelmReleaseRun,
  release: ReleaseManifest,
  events: [HookEvent, HookEvent],
  opts: ActionOptions & { force?: boolean; what: string },
): Promise<void> {
  await hooks(run, release, events[0], opts.disableHooks);
  const changes = await applyRelease(run, release, { force: !!opts.force, what: opts.what });
  const summary = changeSummary(changes);
  if (summary) run.ctx.event('info', 'Progressing', summary);
  const health = await waitForRelease(run, need(run.applied, 'the applied objects'), {
    disableWait: opts.disableWait,
    disableWaitForJobs: opts.disableWaitForJobs,
    timeoutMs: run.timeoutMs,
  });
  if (health.superseded) throw new SupersededError(health.message);
  if (!health.healthy) {
    run.ctx.setCondition(ConditionType.Healthy, 'False', Reason.HealthCheckFailed, health.message);
    throw new RetryableError(Reason.HealthCheckFailed, health.message);
  }
  await hooks(run, release, events[1], opts.disableHooks);
  if (events[0] !== 'pre-rollback') await runReleaseTests(run, release);
}

/** `spec.test.enable`: the chart's test hooks after an install or upgrade; a failure fails it unless ignored. */
async function runReleaseTests(run: HelmReleaseRun, release: ReleaseManifest): Promise<void> {
  const test = run.obj.spec.test;
  if (!test?.enable) return;
  const result = await run.deps.runTests(release.hooks ?? [], {
    client: need(run.target, 'the target cluster'),
    ...(run.impersonate ? { impersonate: run.impersonate } : {}),
    namespace: run.placement.targetNamespace,
    timeoutMs: test.timeout ? parseDuration(test.timeout) : run.timeoutMs,
    signal: run.signal,
    labels: { [HELM_NAME_LABEL]: run.owner.name, [HELM_NAMESPACE_LABEL]: run.owner.namespace },
    annotations: {},
    ...(test.filters ? { filters: test.filters } : {}),
  });
  if (result.ok) {
    const names = result.ran.map((r) => r.name).join(', ');
    run.ctx.setCondition(
      ConditionType.TestSuccess,
      'True',
      Reason.Succeeded,
      names ? `tests passed: ${names}` : 'no tests to run',
    );
    return;
  }
  const message = `test ${result.failed.kind}/${result.failed.name} failed: ${result.failed.message}`;
  run.ctx.setCondition(ConditionType.TestSuccess, 'False', Reason.Failed, message);
  if (!test.ignoreFailures) throw new RetryableError(Reason.Failed, message);
}

/** Marks every other deployed record superseded, as Helm does when a new one is deployed. */
async function supersedeOthers(run: HelmReleaseRun, current: number): Promise<void> {
  const store = need(run.store, 'the release store');
  for (const r of await store.history(run.placement.releaseName)) {
    if (r.version === current || r.info.status !== 'deployed') continue;
    await store.update({ ...r, info: { ...r.info, status: 'superseded', description: 'Superseded' } });
  }
}

/** Installs or upgrades; with nothing new, corrects drift of the deployed release's objects. */
export async function release(run: HelmReleaseRun): Promise<undefined> {
  if (run.action === 'none') return undefined;
  const { obj, ctx, status, placement } = run;
  const store = need(run.store, 'the release store');
  const chart = need(run.chart, 'the chart');
  const rendered = need(run.rendered, 'the render');
  const action = run.action === 'install' ? 'install' : 'upgrade';
  const version = (need(run.history, 'the history').at(-1)?.version ?? 0) + 1;
  status.storageNamespace = placement.storageNamespace;
  status.lastAttemptedRevision = chart.revision;
  status.lastAttemptedConfigDigest = need(run.configDigest, 'the values');
  status.lastAttemptedReleaseAction = action;
  await ensureTargetNamespace(run, action);

  await store.prune(placement.releaseName, obj.spec.maxHistory ?? DEFAULT_MAX_HISTORY);
  const record = recordOf(
    run,
    version,
    rendered,
    action === 'install' ? 'pending-install' : 'pending-upgrade',
    action === 'install' ? 'Initial install underway' : 'Preparing upgrade',
  );
  try {
    await store.create(record);
  } catch (err) {
    if (err instanceof ReleaseExistsError) throw new RetryableError(Reason.ReconciliationFailed, err.message);
    throw err;
  }
  run.release = record;
  await ctx.saveProgress(
    `${action} of ${chart.name}@${chart.version} as ${placement.releaseName} v${version}`,
  );
  const opts = action === 'install' ? obj.spec.install : obj.spec.upgrade;
  try {
    await perform(
      run,
      rendered,
      action === 'install' ? ['pre-install', 'post-install'] : ['pre-upgrade', 'post-upgrade'],
      {
        ...opts,
        force: action === 'upgrade' ? obj.spec.upgrade?.force : false,
        what: `${action} of ${placement.releaseName} v${version}`,
      },
    );
  } catch (err) {
    if (ctx.signal.aborted) throw err; // shutting down: the pending record is recovered next time
    if (err instanceof SupersededError) {
      // The latest desired state wins: this revision is given up without counting as a failure.
      await store.update({
        ...record,
        info: { ...record.info, status: 'failed', description: `Superseded while waiting: ${err.message}` },
      });
      throw new WaitingError(Reason.Progressing, `${action} of v${version} given up: ${err.message}`, 1_000);
    }
    await failed(run, record, action, (err as Error).message);
  }
  const done = action === 'install' ? 'Install complete' : 'Upgrade complete';
  await store.update({ ...record, info: { ...record.info, status: 'deployed', description: done } });
  await supersedeOthers(run, version);
  status.installFailures = 0;
  status.upgradeFailures = 0;
  status.failures = 0;
  const message = `Helm ${action} succeeded for release ${placement.storageNamespace}/${placement.releaseName}.v${version} with chart ${chart.name}@${chart.version}`;
  ctx.setCondition(
    ConditionType.Released,
    'True',
    action === 'install' ? Reason.InstallSucceeded : Reason.UpgradeSucceeded,
    message,
  );
  ctx.setCondition(ConditionType.Healthy, 'True', Reason.Succeeded, 'all health checks passed');
  ctx.event('info', action === 'install' ? Reason.InstallSucceeded : Reason.UpgradeSucceeded, message, {
    revision: chart.revision,
  });
  return undefined;
}

/** Records the failure, remediates as configured, and ends the reconcile with the reason. */
async function failed(
  run: HelmReleaseRun,
  record: ReleaseRecord,
  action: 'install' | 'upgrade',
  why: string,
): Promise<never> {
  const { obj, ctx, status, placement } = run;
  const store = need(run.store, 'the release store');
  const reason = action === 'install' ? Reason.InstallFailed : Reason.UpgradeFailed;
  await store.update({
    ...record,
    info: {
      ...record.info,
      status: 'failed',
      description: `Release "${placement.releaseName}" failed: ${why}`,
    },
  });
  let failures: number;
  if (action === 'install') {
    failures = (status.installFailures ?? 0) + 1;
    status.installFailures = failures;
  } else {
    failures = (status.upgradeFailures ?? 0) + 1;
    status.upgradeFailures = failures;
  }
  status.failures = (status.failures ?? 0) + 1;
  const remediation = action === 'install' ? obj.spec.install?.remediation : obj.spec.upgrade?.remediation;
  const retries = remediation?.retries ?? 0;
  const exhausted = retriesExhausted(failures, retries);
  const remediate = !exhausted || (remediation?.remediateLastFailure ?? retries !== 0);
  const message = `Helm ${action} failed for release ${placement.storageNamespace}/${placement.releaseName}.v${record.version}: ${why}`;
  ctx.setCondition(ConditionType.Released, 'False', reason, message);
  ctx.event('error', reason, message);
  if (action === 'upgrade' && obj.spec.upgrade?.cleanupOnFail) await cleanupFailedUpgrade(run);
  if (remediate) {
    const strategy =
      action === 'upgrade' && run.deployed
        ? ((obj.spec.upgrade?.remediation as { strategy?: string } | undefined)?.strategy ?? 'rollback')
        : 'uninstall';
    if (strategy === 'rollback')
      await rollback(run, need(run.deployed, 'the deployed release'), record.version + 1);
    else await uninstallFailed(run, record);
  }
  const full = `${message}${exhausted ? ` (${failures} failures, retries: ${retries}: not retried until the chart or values change, or 'mooring reconcile helmrelease --force' asks)` : ''}`;
  if (exhausted) throw new StalledError(reason, full);
  throw new RetryableError(reason, full);
}

/** Flux's rollback remediation: the last deployed record's manifest applied again as a new revision. */
async function rollback(run: HelmReleaseRun, to: ReleaseRecord, version: number): Promise<void> {
  const { ctx, placement } = run;
  try {
    await rollbackTo(run, to, version);
  } catch (err) {
    const message = `Helm rollback to v${to.version} failed: ${(err as Error).message}`;
    ctx.setCondition(ConditionType.Remediated, 'False', Reason.RollbackFailed, message);
    ctx.event('error', Reason.RollbackFailed, message);
    return;
  }
  const message = `Helm rollback to previous release ${placement.storageNamespace}/${placement.releaseName}.v${to.version} succeeded (as v${version})`;
  ctx.setCondition(ConditionType.Remediated, 'True', Reason.RollbackSucceeded, message);
  ctx.event('info', Reason.RollbackSucceeded, message);
}

/**
 * Helm's rollback: record `to`'s manifest, hooks, chart and values as revision `version`
 * (pending-rollback), run pre-rollback hooks, apply, prune, wait, post-rollback hooks, then mark it
 * deployed and the others superseded. A failure marks the record failed and rethrows.
 */
export async function rollbackTo(
  run: HelmReleaseRun,
  to: ReleaseRecord,
  version: number,
): Promise<ReleaseRecord> {
  const { obj, placement } = run;
  const store = need(run.store, 'the release store');
  const release = releaseFromRecord(to.manifest ?? '', to.hooks);
  const record = recordOf(run, version, release, 'pending-rollback', `Rollback to ${to.version}`, to);
  await store.create(record);
  try {
    await perform(run, release, ['pre-rollback', 'post-rollback'], {
      ...obj.spec.rollback,
      force: obj.spec.rollback?.force,
      what: `rollback of ${placement.releaseName} to v${to.version}`,
    });
  } catch (err) {
    await store.update({
      ...record,
      info: {
        ...record.info,
        status: 'failed',
        description: `Rollback "${placement.releaseName}" failed: ${(err as Error).message}`,
      },
    });
    throw err;
  }
  const deployed: ReleaseRecord = { ...record, info: { ...record.info, status: 'deployed' } };
  await store.update(deployed);
  await supersedeOthers(run, version);
  run.rendered = release;
  return deployed;
}

/** Flux's uninstall remediation: the failed release's objects deleted, its record marked uninstalled. */
async function uninstallFailed(run: HelmReleaseRun, record: ReleaseRecord): Promise<void> {
  const { ctx, placement } = run;
  const result = await deleteReleaseObjects(
    run.obj,
    need(run.target, 'the target cluster'),
    run.status.inventory,
    run.impersonate,
  );
  if (result.failed.length) {
    const message = `uninstall remediation could not delete: ${result.failed.map((f) => f.message).join('; ')}`;
    ctx.setCondition(ConditionType.Remediated, 'False', Reason.UninstallFailed, message);
    return;
  }
  run.status.inventory = { entries: [] };
  await need(run.store, 'the release store').update({
    ...record,
    info: {
      ...record.info,
      status: 'uninstalled',
      deleted: helmTime(ctx.now()),
      description: 'Uninstallation complete',
    },
  });
  const message = `Helm uninstall of failed release ${placement.storageNamespace}/${placement.releaseName}.v${record.version} succeeded`;
  ctx.setCondition(ConditionType.Remediated, 'True', Reason.UninstallSucceeded, message);
  ctx.event('info', Reason.UninstallSucceeded, message);
}
