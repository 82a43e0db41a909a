// `spec.install.createNamespace`: before an install, and before an upgrade (the namespace may have
// been deleted since; the records then live in another storageNamespace), the target namespace is
// made when it is missing (as the HelmRelease's identity, labelled as the release's objects are),
// or the action is refused with the way out; nothing is recorded or applied before either.
import { HELM_NAME_LABEL, HELM_NAMESPACE_LABEL, Reason } from '@mooring/api';
import { FIELD_MANAGER, RetryableError } from '@mooring/runtime';
import { type HelmReleaseRun, need } from './helm-release-run.ts';

export async function ensureTargetNamespace(
  run: HelmReleaseRun,
  action: 'install' | 'upgrade',
): Promise<void> {
  const target = need(run.target, 'the target cluster');
  const name = run.placement.targetNamespace;
  const existing = await target.getOrUndefined({ apiVersion: 'v1', kind: 'Namespace', name });
  if (existing) return;
  if (!run.obj.spec.install?.createNamespace)
    throw new RetryableError(
      action === 'install' ? Reason.InstallFailed : Reason.UpgradeFailed,
      `target namespace ${name} does not exist: create it, or set spec.install.createNamespace: true`,
    );
  await target.apply(
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: { [HELM_NAME_LABEL]: run.owner.name, [HELM_NAMESPACE_LABEL]: run.owner.namespace },
      },
    },
    { fieldManager: FIELD_MANAGER, impersonate: run.impersonate },
  );
  run.ctx.event('info', 'Progressing', `Namespace/${name} created (spec.install.createNamespace)`);
}
