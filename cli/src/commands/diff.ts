import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

/** `mooring diff kustomization <name> --path <dir>`: exit 0 no change, 1 drift, 2 error. */
export function registerDiff(program: Command): void {
  const diff = program.command('diff').description('preview what applying local changes would do');
  diff
    .command('kustomization')
    .alias('ks')
    .description(
      'render a local directory as the Kustomization would and diff it against the cluster (exit 0 none, 1 drift, 2 error)',
    )
    .argument('<name>', 'Kustomization name')
    .requiredOption('--path <dir>', 'local directory to render')
    .action(async (name: string, opts: { path: string }, cmd: Command) => {
      const { CliError, describeError, EXIT_ERROR } = await import('../cli-error.ts');
      try {
        const { getKustomization, renderKustomization } = await import('../render-local.ts');
        const { diffAgainstCluster } = await import('../live-diff.ts');
        await sessionOf(cmd).use(async (client, namespace) => {
          const ks = await getKustomization(client, namespace, name);
          const rendered = await renderKustomization(client, ks, opts.path);
          const diffs = await diffAgainstCluster(client, ks, rendered);
          for (const d of diffs) process.stdout.write(`► ${d.id} ${d.change}\n${d.patch}\n`);
          if (diffs.length === 0) process.stderr.write(`✔ no changes: the cluster matches ${opts.path}\n`);
          else process.exitCode = 1;
        });
      } catch (err) {
        // Errors must not look like drift to scripts: they exit above 1.
        if (err instanceof CliError && err.exitCode > 1) throw err;
        throw new CliError(describeError(err).replace(/\.$/, ''), EXIT_ERROR);
      }
    });
}
