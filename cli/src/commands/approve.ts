import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface ApproveFlags {
  timeout: string;
  wait: boolean;
}

const KUSTOMIZATION_WORDS = ['kustomization', 'kustomizations', 'ks'];

/** `ks/apps`, `kustomization/apps`, or `ks apps` as two words; undefined when it names another kind. */
function kustomizationName(target: string[]): string | undefined {
  const [first, second] = target;
  if (target.length === 1 && first?.includes('/')) {
    const [kind, name, ...rest] = first.split('/');
    return rest.length === 0 && name && KUSTOMIZATION_WORDS.includes(kind!.toLowerCase()) ? name : undefined;
  }
  if (target.length === 2 && KUSTOMIZATION_WORDS.includes(first!.toLowerCase())) return second;
  return undefined;
}

/**
 * `mooring approve prune ks/<name>`: a prune over the Kustomization's deletion budget goes ahead
 * for the revision it was refused at (status.prunePending), and for that revision only: the
 * approval is the annotation kustomize.mooring.dev/approvePrune=<revision>. Waits for the
 * reconcile that deletes, unless --no-wait.
 */
export function registerApprove(program: Command): void {
  program
    .command('approve')
    .description('approve what an operator is holding back, e.g. approve prune ks/apps')
    .argument('<what>', 'prune: the deletions over a Kustomization’s deletion budget')
    .argument('<target...>', 'the Kustomization, as ks/<name> or kustomization <name>')
    .option('--timeout <duration>', 'how long to wait for the prune', '5m')
    .option('--no-wait', 'annotate and return without waiting for the reconcile')
    .action(async (what: string, target: string[], flags: ApproveFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      const name = kustomizationName(target);
      if (what !== 'prune' || !name)
        throw new CliError(
          `approve works on a Kustomization's prune: write 'mooring approve prune ks/<name>'.`,
          EXIT_ERROR,
        );
      const { parseDuration } = await import('@mooring/runtime');
      const { APPROVE_PRUNE_ANNOTATION, kindDefinition, KUSTOMIZE_API_VERSION } = await import(
        '@mooring/api'
      );
      const { getObject, requestPatch, requestTimestamp, waitForReconciles } = await import(
        '../wait-reconcile.ts'
      );
      const def = kindDefinition('Kustomization');
      await sessionOf(cmd).use(async (client, namespace) => {
        type Status = {
          prunePending?: { revision: string; count: number; budget: number; objects: string[] };
          lastHandledPruneApproval?: string;
        };
        const current = await getObject(client, def, namespace, name);
        const pending = (current.status as Status | undefined)?.prunePending;
        if (!pending)
          throw new CliError(
            `Kustomization ${namespace}/${name} has no prune waiting for approval: 'mooring get ks ${name} -n ${namespace}' shows its state.`,
          );
        const listed = pending.objects.map((o) => `  ${o}\n`).join('');
        const more =
          pending.count > pending.objects.length
            ? `  … and ${pending.count - pending.objects.length} more\n`
            : '';
        process.stderr.write(
          `► approving the prune of ${pending.count} objects (budget ${pending.budget}) of Kustomization ${namespace}/${name} at revision ${pending.revision}:\n${listed}${more}`,
        );
        const requestedAt = requestTimestamp();
        const patch = requestPatch(requestedAt);
        patch.metadata.annotations[APPROVE_PRUNE_ANNOTATION] = pending.revision;
        const object = await client.mergePatch(
          { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace, name },
          patch,
        );
        if (!flags.wait) {
          process.stdout.write(`✔ prune approved for revision ${pending.revision}\n`);
          return;
        }
        let outcome: Parameters<Parameters<typeof waitForReconciles>[5]>[1] | undefined;
        await waitForReconciles(
          client,
          def,
          namespace,
          new Map([[name, { requestedAt, object }]]),
          parseDuration(flags.timeout),
          (_, o) => {
            outcome = o;
          },
        );
        const after = (await getObject(client, def, namespace, name)).status as Status | undefined;
        if (after?.lastHandledPruneApproval === pending.revision) {
          process.stdout.write(
            `✔ Kustomization ${namespace}/${name} pruned ${pending.count} objects at revision ${pending.revision}\n`,
          );
          return;
        }
        const why = !outcome
          ? 'no reconcile reported'
          : 'timedOut' in outcome
            ? outcome.message
            : outcome.message;
        process.stdout.write(
          `✗ Kustomization ${namespace}/${name} has not pruned yet (the approval stays for revision ${pending.revision}): ${why}\n`,
        );
        process.exitCode = 1;
      });
    });
}
