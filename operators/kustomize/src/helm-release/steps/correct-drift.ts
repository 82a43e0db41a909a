// Nothing new to release: the deployed release's objects are compared with the cluster. `enabled`
// (Mooring's default) applies them again, so a hand edit is reverted, and names each object it
// put back with the field managers that had changed it (from its managedFields); `warn` only reports; `disabled` leaves the cluster alone. No release revision is made.
import { Reason } from '@mooring/api';
import { FIELD_MANAGER } from '@mooring/runtime';
import type { ApplyChange } from '../../apply/apply-set.ts';
import { wouldChange } from '../../apply/compare.ts';
import { driftedFieldManagers } from '../../apply/managed-fields.ts';
import type { Manifest } from '../../apply/object-policy.ts';
import { refToString } from '../../inventory.ts';
import { applyRelease } from '../apply-release.ts';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { withOwnership } from '../render-release.ts';

export async function correctDrift(run: HelmReleaseRun): Promise<undefined> {
  if (run.action !== 'none') return undefined;
  const mode = run.obj.spec.driftDetection?.mode ?? 'enabled';
  const release = need(run.rendered, 'the deployed release');
  if (mode === 'disabled') return undefined;
  if (mode === 'warn') {
    const drifted = await driftedObjects(run, withOwnership(release.objects, run.owner, run.placement));
    if (drifted.length)
      run.ctx.event(
        'error',
        Reason.DriftDetected,
        `drift detected (not corrected, driftDetection.mode is warn): ${drifted.join(', ')}`,
      );
    return undefined;
  }
  const changes = await applyRelease(run, release, { force: false, what: 'correcting drift' });
  const summary = driftSummary(changes);
  if (summary) run.ctx.event('info', Reason.DriftDetected, `drift corrected:\n${summary}`);
  return undefined;
}

/** `by <managers>` when the managedFields name who changed an object; nothing when none do. */
const changedBy = (managers: string[] | undefined) => (managers?.length ? ` by ${managers.join(', ')}` : '');

/** One line per object put back, naming the field managers whose edit it reverted. */
function driftSummary(changes: ApplyChange[]): string {
  return changes
    .filter((c) => c.action !== 'unchanged' && c.action !== 'skipped')
    .map((c) =>
      c.action === 'created'
        ? `${refToString(c.ref)} created (it was missing)`
        : `${refToString(c.ref)} ${c.action} (changed${changedBy(c.changedBy)})`,
    )
    .join('\n');
}

/** The objects whose server-side dry run differs from the live object (or that are missing). */
async function driftedObjects(run: HelmReleaseRun, objects: Manifest[]): Promise<string[]> {
  const target = need(run.target, 'the target cluster');
  const out: string[] = [];
  for (const o of objects) {
    const { namespaced } = await target.mapper.map(o.apiVersion, o.kind);
    const namespace = namespaced ? (o.metadata.namespace ?? run.placement.targetNamespace) : undefined;
    const obj = { ...o, metadata: { ...o.metadata, namespace } } as Manifest & { metadata: { name: string } };
    const name = `${o.kind}/${namespace ? `${namespace}/` : ''}${o.metadata.name}`;
    const live = await target.getOrUndefined<Manifest & { metadata: { name: string } }>({
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace,
      name: o.metadata.name!,
    });
    if (!live) {
      out.push(`${name} missing`);
      continue;
    }
    const dry = await target.apply(obj, {
      fieldManager: FIELD_MANAGER,
      force: true,
      dryRun: true,
      impersonate: run.impersonate,
    });
    if (wouldChange(live, dry))
      out.push(`${name} (changed${changedBy(driftedFieldManagers(live, dry, FIELD_MANAGER))})`);
  }
  return out;
}
