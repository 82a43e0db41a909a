// The steps before anything is written: validate, resolve the chart, dependencies, values.
import { Reason } from '@mooring/api';
import { RetryableError, readObjectData, StalledError } from '@mooring/runtime';
import type { DependencyNode } from '../../dependencies.ts';
import { compileHealthExprs } from '../../health-exprs.ts';
import { impersonationFor } from '../../impersonation.ts';
import { awaitDependencies } from '../../steps/check-dependencies.ts';
import { chartArtifact, fetchChart } from '../chart-source.ts';
import type { HelmReleaseRun } from '../helm-release-run.ts';
import { composeValues, configDigest, ValuesError } from '../values.ts';

/** Refuses what the spec asks and Mooring cannot do, before anything is fetched or applied. */
export function validateSpec(run: HelmReleaseRun): undefined {
  const { spec } = run.obj;
  if (!spec.chart === !spec.chartRef)
    throw new StalledError(Reason.InvalidSpec, 'set exactly one of spec.chart and spec.chartRef');
  try {
    run.healthExprs = spec.healthCheckExprs?.length ? compileHealthExprs(spec.healthCheckExprs) : undefined;
  } catch (err) {
    throw new StalledError(Reason.InvalidCELExpression, (err as Error).message);
  }
  return undefined;
}

/** The chart's artifact (through the owned HelmChart for spec.chart), fetched, verified and read; the target cluster. */
export async function resolveChart(run: HelmReleaseRun): Promise<undefined> {
  const { client } = run.deps;
  // The HelmChart lives on this cluster: impersonated as on this cluster, whatever spec.kubeConfig says.
  const local = impersonationFor(
    { ...run.obj, spec: { ...run.obj.spec, kubeConfig: undefined } },
    run.deps.defaultServiceAccount,
  );
  const { artifact, helmChart } = await chartArtifact(client, run.obj, { ...run.deps, impersonate: local });
  if (helmChart) run.status.helmChart = helmChart;
  run.chart = await fetchChart(run.deps.artifacts, artifact, run.signal);
  run.target = (await run.memory.remotes.clientFor(client, run.obj)) ?? client;
  run.impersonate = impersonationFor(run.obj, run.deps.defaultServiceAccount);
  return undefined;
}

/** `dependsOn`, on HelmReleases and Kustomizations alike. */
export async function checkDependencies(run: HelmReleaseRun): Promise<undefined> {
  await awaitDependencies(run.deps.client, run.obj as DependencyNode, {
    sourceRevision: undefined,
    requeueDependencyMs: run.deps.requeueDependencyMs,
    cache: run.ctx.cache,
  });
  return undefined;
}

/** valuesFrom in order, then spec.values; their digest is the configDigest. */
export async function composeReleaseValues(run: HelmReleaseRun): Promise<undefined> {
  const namespace = run.owner.namespace;
  try {
    run.values = await composeValues(run.obj.spec.valuesFrom ?? [], run.obj.spec.values, (kind, name) =>
      readObjectData(run.deps.client, kind, namespace, name),
    );
  } catch (err) {
    // Nothing is applied or recorded yet: the deployed release stays as it is.
    if (err instanceof ValuesError)
      throw new RetryableError(Reason.InitFailed, `${err.message} in namespace ${namespace}`);
    throw err;
  }
  run.configDigest = configDigest(run.values);
  return undefined;
}
