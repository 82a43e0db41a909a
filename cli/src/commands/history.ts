import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface HistoryFlags {
  output?: string;
  max?: string;
}

/**
 * `mooring history helmrelease <name>`: the release's revisions as Helm records them (the same
 * records `helm history` reads), so a release Mooring made and one `helm` or Flux made read alike.
 */
export function registerHistory(program: Command): void {
  program
    .command('history')
    .description("show a HelmRelease's Helm revisions, e.g. history helmrelease podinfo -n apps")
    .argument('<kind>', 'helmrelease (hr)')
    .argument('<name>', 'name of the HelmRelease')
    .option('-o, --output <format>', 'table or json', 'table')
    .option('--max <n>', 'newest revisions to show', '256')
    .action(async (kind: string, name: string, flags: HistoryFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      if (!['helmrelease', 'helmreleases', 'hr'].includes(kind.toLowerCase()))
        throw new CliError(
          `history shows HelmReleases only: write 'mooring history helmrelease ${name}'.`,
          EXIT_ERROR,
        );
      const { releaseHistory, formatHistory } = await import('../release-history.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const history = await releaseHistory(client, namespace, name);
        const shown = history.revisions.slice(-Math.max(1, Number(flags.max) || 256));
        if (flags.output === 'json') process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
        else process.stdout.write(formatHistory(history.release, history.storageNamespace, shown));
      });
    });
}
