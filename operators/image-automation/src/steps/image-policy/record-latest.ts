import type { ImageRef } from '@mooring/api';
import { parseDuration, type StepOutcome } from '@mooring/runtime';
import type { ImagePolicyRun } from '../../image-policy-run.ts';
import { need } from '../../run.ts';

function sameRef(a: ImageRef | undefined, b: ImageRef | undefined): boolean {
  return a?.name === b?.name && a?.tag === b?.tag && (a?.digest ?? '') === (b?.digest ?? '');
}

function show(ref: ImageRef): string {
  return `${ref.name}:${ref.tag}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * A new image becomes `status.latestRef` (the one before it `observedPreviousRef`), with a
 * Succeeded event; the same image writes nothing. With digestReflectionPolicy Always the digest
 * is looked up again at `spec.interval`.
 */
export function recordLatest(run: ImagePolicyRun): StepOutcome | undefined {
  const { obj, ctx, status } = run;
  const latest = need(run.latest, 'the latest image');
  const previous = status.latestRef;
  if (!sameRef(previous, latest)) {
    if (previous) status.observedPreviousRef = previous;
    status.latestRef = latest;
    ctx.event(
      'info',
      'Succeeded',
      previous
        ? `Latest image tag for ${latest.name} updated from ${previous.tag} to ${latest.tag}`
        : `Latest image tag for ${latest.name} resolved to ${latest.tag}`,
      { revision: show(latest) },
    );
  }
  const mode = obj.spec.digestReflectionPolicy ?? 'Never';
  const requeueAfterMs =
    mode === 'Always' && obj.spec.interval ? parseDuration(obj.spec.interval) : undefined;
  run.result = {
    message: `Latest image tag for ${latest.name} resolved to ${latest.tag}`,
    revision: show(latest),
  };
  return requeueAfterMs ? { requeueAfterMs } : undefined;
}
