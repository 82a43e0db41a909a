import { type GitRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { gitAuthFromSecret, InvalidGitCredentialsError } from '@mooring/git';
import { readSecretData, StalledError, WaitingError } from '@mooring/runtime';
import { checkCrossNamespace } from '../../cross-namespace.ts';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';

/**
 * The GitRepository `spec.sourceRef` names (no other kind), when this namespace may refer to it;
 * waits while it does not exist.
 */
export async function resolveSource(run: ImageUpdateAutomationRun): Promise<undefined> {
  const { deps, namespace } = run;
  const ref = run.obj.spec.sourceRef;
  if ((ref.kind ?? 'GitRepository') !== 'GitRepository') {
    throw new StalledError(
      Reason.InvalidSourceConfiguration,
      `sourceRef kind ${ref.kind} is not supported; use GitRepository`,
    );
  }
  const srcNs = ref.namespace ?? namespace;
  const what = `GitRepository ${srcNs}/${ref.name}`;
  await checkCrossNamespace(deps.client, {
    noCrossNamespaceRefs: deps.noCrossNamespaceRefs,
    from: namespace,
    to: srcNs,
    what,
    accessFrom: null,
  });
  const repo = await deps.client.getOrUndefined<GitRepository>({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    namespace: srcNs,
    name: ref.name,
  });
  if (!repo) throw new WaitingError(Reason.DependencyNotReady, `${what} not found`, deps.dependencyRequeueMs);
  run.repo = repo;
  run.sourceNamespace = srcNs;
  return undefined;
}

/** The GitRepository's credentials (its `spec.secretRef`), which the clone and the push use. */
export async function readCredentials(run: ImageUpdateAutomationRun): Promise<undefined> {
  const repo = need(run.repo, 'the GitRepository');
  const secret = repo.spec.secretRef?.name;
  if (!secret) return undefined;
  const srcNs = need(run.sourceNamespace, "the GitRepository's namespace");
  const data = await readSecretData(run.deps.client, srcNs, secret, 'Git credentials');
  try {
    run.auth = gitAuthFromSecret(data, repo.spec.url, secret);
  } catch (err) {
    if (err instanceof InvalidGitCredentialsError)
      throw new StalledError('InvalidSourceConfiguration', err.message);
    throw err;
  }
  return undefined;
}

/**
 * The branch to clone (`git.checkout.ref`, else the GitRepository's ref; a branch only) and the
 * one to push to (`git.push.branch`, else the same).
 */
export function chooseBranches(run: ImageUpdateAutomationRun): undefined {
  const { spec } = run.obj;
  const ref = spec.git.checkout?.ref ?? need(run.repo, 'the GitRepository').spec.ref ?? {};
  if (ref.tag || ref.semver || ref.name || ref.commit) {
    throw new StalledError(
      Reason.InvalidSourceConfiguration,
      'the checkout ref must be a branch: set git.checkout.ref.branch',
    );
  }
  const checkout = ref.branch || 'master';
  run.branches = { checkout, push: spec.git.push?.branch || checkout };
  return undefined;
}
