// `mooring rollback helmrelease <name> [--to N]`: the CLI writes helm.mooring.dev/rollbackTo
// (`<N>@<when>`), and this step makes revision N the deployed release again, as `helm rollback`
// does (its manifest, hooks, chart and values recorded as a new revision). GitOps would upgrade
// straight back on the next reconcile, so the rollback is held: while the chart and values in
// Git are the ones the user rolled back from, the reconcile only corrects drift against it; a
// new chart revision or new values (a fix pushed) is released as usual and ends the hold.
import { ROLLBACK_ANNOTATION } from '@mooring/api';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { rollbackTo } from './release.ts';

/** The revision a rollbackTo value asks for, or undefined when it is not `<N>` or `<N>@<anything>`. */
export function requestedRevision(value: string): number | undefined {
  const m = /^(\d+)(?:@.*)?$/.exec(value.trim());
  const n = m ? Number(m[1]) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export async function rollbackRequest(run: HelmReleaseRun): Promise<undefined> {
  const { obj, ctx, status } = run;
  const chart = need(run.chart, 'the chart');
  const digest = need(run.configDigest, 'the values');
  const requested = obj.metadata.annotations?.[ROLLBACK_ANNOTATION];
  if (requested && requested !== status.lastHandledRollbackAt) {
    status.lastHandledRollbackAt = requested;
    const history = need(run.history, 'the history');
    const version = requestedRevision(requested);
    const target = history.find((r) => r.version === version);
    const refuse = (why: string) => ctx.event('error', 'RollbackFailed', `rollback not done: ${why}`);
    if (version === undefined)
      refuse(`${ROLLBACK_ANNOTATION} '${requested}' names no revision (write <N>@<time>)`);
    else if (!target) refuse(`release ${run.placement.releaseName} has no revision ${version}`);
    else if (!target.manifest) refuse(`revision ${version} has no manifest to restore`);
    else {
      const next = (history.at(-1)?.version ?? 0) + 1;
      await ctx.saveProgress(`rolling back ${run.placement.releaseName} to v${version} as v${next}`);
      const deployed = await rollbackTo(run, target, next);
      history.push(deployed);
      run.deployed = deployed;
      status.rollbackHold = { version: target.version, chartRevision: chart.revision, configDigest: digest };
      ctx.event(
        'info',
        'RollbackSucceeded',
        `rolled back ${run.placement.releaseName} to v${version} (as v${next}) as asked; held until the chart or values change`,
      );
    }
  }
  const hold = status.rollbackHold;
  if (!hold) return undefined;
  if (run.forced || hold.chartRevision !== chart.revision || hold.configDigest !== digest) {
    // Latest desired state wins: a new chart or new values end the hold and are released, as
    // does a forced upgrade (the user asks for what Git declares).
    delete status.rollbackHold;
    return undefined;
  }
  // Held: the rolled-back release is what stays applied (drift corrected against it).
  run.action = 'none';
  run.rendered = undefined;
  return undefined;
}
