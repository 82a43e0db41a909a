import { type Artifact, type HelmRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { ApiError, type MooringObject, RetryableError, StalledError } from '@mooring/runtime';
import { readHelmCredentials } from '../../helm/credentials.ts';
import type { HelmChartRun } from '../../helm-chart-run.ts';

type SourceObject = MooringObject & { status?: MooringObject['status'] & { artifact?: Artifact } };

/** The source object `spec.sourceRef` names (same namespace) and its artifact; none yet is retried. */
export async function resolveSource(run: HelmChartRun): Promise<undefined> {
  const { kind, name } = run.obj.spec.sourceRef;
  const namespace = run.storageRef.namespace;
  let source: SourceObject;
  try {
    source = await run.deps.client.get<SourceObject>({
      apiVersion: SOURCE_API_VERSION,
      kind,
      namespace,
      name,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) {
      throw new RetryableError(Reason.DependencyNotReady, `${kind} ${namespace}/${name} not found`);
    }
    throw err;
  }
  if (kind === 'HelmRepository' && (source as HelmRepository).spec.type === 'oci') {
    throw new StalledError(
      Reason.UnsupportedConfiguration,
      `charts from HelmRepository ${name} of type oci are not supported yet; use type default or an OCIRepository`,
    );
  }
  const artifact = source.status?.artifact;
  if (!artifact) {
    throw new RetryableError(Reason.DependencyNotReady, `${kind} ${namespace}/${name} has no artifact yet`);
  }
  run.source = { kind, name, artifact };
  if (kind === 'HelmRepository') run.source.repository = source as HelmRepository;
  return undefined;
}

/** For a HelmRepository source: its credentials, to download the chart with. */
export async function readCredentials(run: HelmChartRun): Promise<undefined> {
  const repository = run.source?.repository;
  if (!repository) return undefined;
  run.credentials = await readHelmCredentials(run.deps.client, run.storageRef.namespace, repository.spec);
  return undefined;
}
