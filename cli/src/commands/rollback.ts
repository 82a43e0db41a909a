import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface RollbackFlags {
  to?: string;
  timeout: string;
}

/**
 * `mooring rollback helmrelease <name> [--to N]`: asks the operator to make Helm revision N (by
 * default the one before the deployed release, as `helm rollback` picks) the deployed release
 * again, and waits for it. The rollback holds until the chart or values in Git change.
 */
export function registerRollback(program: Command): void {
  program
    .command('rollback')
    .description(
      'roll a HelmRelease back to an earlier Helm revision, e.g. rollback helmrelease podinfo --to 2',
    )
    .argument('<kind>', 'helmrelease (hr)')
    .argument('<name>', 'name of the HelmRelease')
    .option('--to <revision>', 'Helm revision to restore (default: the one before the deployed release)')
    .option('--timeout <duration>', 'how long to wait for the rollback', '5m')
    .addHelpText(
      'after',
      '\nThe operator records the rollback as a new Helm revision (as helm rollback does) and keeps it\napplied, drift corrected, until the chart or values change: push the fix to Git to move on.\n',
    )
    .action(async (kind: string, name: string, flags: RollbackFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      if (!['helmrelease', 'helmreleases', 'hr'].includes(kind.toLowerCase()))
        throw new CliError(
          `rollback works on HelmReleases only: write 'mooring rollback helmrelease ${name}'.`,
          EXIT_ERROR,
        );
      const { parseDuration } = await import('@mooring/runtime');
      const { HELM_API_VERSION, kindDefinition, ROLLBACK_ANNOTATION } = await import('@mooring/api');
      const { releaseHistory, getHelmRelease } = await import('../release-history.ts');
      const { reconcileAndWait, requestTimestamp } = await import('../wait-reconcile.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const history = await releaseHistory(client, namespace, name);
        const deployed = history.revisions.filter((r) => r.status === 'deployed').at(-1);
        const to = flags.to === undefined ? (deployed ? deployed.revision - 1 : undefined) : Number(flags.to);
        if (to === undefined || !Number.isSafeInteger(to) || to < 1)
          throw new CliError(
            flags.to === undefined
              ? `HelmRelease ${namespace}/${name} has no deployed revision to roll back from: give --to <revision>.`
              : `--to '${flags.to}' is not a revision number.`,
            EXIT_ERROR,
          );
        const target = history.revisions.find((r) => r.revision === to);
        if (!target)
          throw new CliError(
            `release ${history.storageNamespace}/${history.release} has no revision ${to}: see 'mooring history helmrelease ${name} -n ${namespace}'.`,
            EXIT_ERROR,
          );
        const value = `${to}@${requestTimestamp()}`;
        const key = { apiVersion: HELM_API_VERSION, kind: 'HelmRelease', namespace, name };
        await client.mergePatch(key, { metadata: { annotations: { [ROLLBACK_ANNOTATION]: value } } });
        process.stderr.write(
          `► asked for a rollback of HelmRelease ${namespace}/${name} to revision ${to}\n`,
        );
        const outcome = await reconcileAndWait(
          client,
          kindDefinition('HelmRelease'),
          namespace,
          name,
          parseDuration(flags.timeout),
        );
        const hr = await getHelmRelease(client, namespace, name);
        const hold = hr.status?.rollbackHold;
        if (hr.status?.lastHandledRollbackAt === value && hold?.version === to && outcome.ready) {
          const latest = hr.status.history?.[0];
          process.stdout.write(
            `✔ HelmRelease ${namespace}/${name} rolled back to revision ${to}${latest ? ` (now revision ${latest.version}, ${latest.chartName}@${latest.chartVersion})` : ''}; held until the chart or values change\n`,
          );
          return;
        }
        process.stdout.write(`✗ HelmRelease ${namespace}/${name} was not rolled back: ${outcome.message}\n`);
        process.exitCode = 1;
      });
    });
}
