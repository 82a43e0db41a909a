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
  diff
    .command('helmrelease')
    .alias('hr')
    .description(
      'render the HelmRelease as the operator would (its chart in the cluster or a local --chart; its values, release history and post-renderers from the cluster) and diff it against the cluster, Secrets masked (exit 0 none, 1 drift, 2 error)',
    )
    .argument('<name>', 'HelmRelease name')
    .option(
      '--chart <dir|tgz>',
      "local chart to render (a directory or a packaged .tgz); default: the chart artifact of the HelmRelease's HelmChart or OCIRepository in the cluster",
    )
    .option(
      '-f, --values <file>',
      'local values file merged over the HelmRelease values (repeatable)',
      collect,
    )
    .action(async (name: string, opts: { chart?: string; values?: string[] }, cmd: Command) => {
      const { CliError, describeError, EXIT_ERROR } = await import('../cli-error.ts');
      try {
        const { getHelmRelease } = await import('../release-history.ts');
        const { renderHelmReleaseLocally } = await import('../helm-release-local.ts');
        const { diffAgainstCluster } = await import('../live-diff.ts');
        await sessionOf(cmd).use(async (client, namespace) => {
          const hr = await getHelmRelease(client, namespace, name);
          const release = await renderHelmReleaseLocally(client, hr, opts.chart, opts.values);
          // A release deletes what its new manifest drops, as Helm does: always prune.
          const owner = {
            metadata: hr.metadata,
            spec: { prune: true },
            status: { inventory: hr.status?.inventory },
          };
          const diffs = await diffAgainstCluster(client, owner, release.objects);
          for (const d of diffs) process.stdout.write(`► ${d.id} ${d.change}\n${d.patch}\n`);
          process.stderr.write(
            diffs.length === 0
              ? `✔ no changes: the cluster matches ${release.chartFrom} (${release.action === 'install' ? 'an install' : 'an upgrade'} would be revision ${release.revision})\n`
              : `◎ ${diffs.length} object${diffs.length === 1 ? '' : 's'} would change in ${release.action === 'install' ? 'an install' : 'an upgrade'} to revision ${release.revision}\n`,
          );
          if (diffs.length) process.exitCode = 1;
        });
      } catch (err) {
        if (err instanceof CliError && err.exitCode > 1) throw err;
        throw new CliError(describeError(err).replace(/\.$/, ''), EXIT_ERROR);
      }
    });
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
