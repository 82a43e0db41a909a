import type { Command } from 'commander';
import type { HelmChartFlags } from '../helm-chart.ts';
import { sessionOf } from '../session.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `mooring build <dir>`, `build kustomization <name> --path <dir>` and `build helmchart <chart>`. */
export function registerBuild(program: Command): void {
  const buildCmd = program
    .command('build')
    .description(
      'render manifests locally: build <dir> is `kustomize build`; build kustomization renders as the operator would; build helmchart is `helm template`',
    )
    .argument('[dir]', 'directory with a kustomization.yaml (or plain YAML files)')
    .action(async (dir: string | undefined) => {
      const { renderDirectory } = await import('../render-local.ts');
      process.stdout.write(await renderDirectory(dir ?? '.'));
    });
  buildCmd
    .command('kustomization')
    .alias('ks')
    .description("render a local directory with a Kustomization's spec from the cluster")
    .argument('<name>', 'Kustomization name')
    .requiredOption('--path <dir>', 'local directory to render instead of the artifact')
    .action(async (name: string, opts: { path: string }, cmd: Command) => {
      const { getKustomization, objectsToYAML, renderKustomization } = await import('../render-local.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const ks = await getKustomization(client, namespace, name);
        process.stdout.write(objectsToYAML(await renderKustomization(client, ks, opts.path)));
      });
    });
  buildCmd
    .command('helmrelease')
    .alias('hr')
    .description(
      "render the HelmRelease as the operator would, from its chart in the cluster or a local --chart: its values (valuesFrom, values), install or upgrade and revision from the release history, the cluster's .Capabilities, post-renderers and ownership marks",
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
      const { getHelmRelease } = await import('../release-history.ts');
      const { renderHelmReleaseLocally } = await import('../helm-release-local.ts');
      const { objectsToYAML } = await import('../render-local.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const hr = await getHelmRelease(client, namespace, name);
        const release = await renderHelmReleaseLocally(client, hr, opts.chart, opts.values);
        process.stdout.write(objectsToYAML(release.objects));
        for (const hook of release.hooks ?? [])
          process.stdout.write(
            `---\n# hook ${(hook.events ?? []).join(',')} (weight ${hook.weight}): ${hook.path}\n${(hook.manifest ?? '').trim()}\n`,
          );
      });
    });
  buildCmd
    .command('helmchart')
    .alias('hc')
    .description(
      "render a local chart offline with Helm's own engine (@mooring/helm, the one render pipeline): the bytes `helm template` prints",
    )
    .argument('<chart>', 'chart directory or packaged chart (.tgz)')
    .option('--name <release>', 'release name', 'release-name')
    .option('-f, --values <file>', "values file to merge, in order ('-' reads stdin; repeatable)", collect)
    .option('--set <key=value>', 'set a value, as helm --set (repeatable)', collect)
    .option('--set-string <key=value>', 'set a value as a string (repeatable)', collect)
    .option('--set-json <key=json>', 'set a value from JSON (repeatable)', collect)
    .option(
      '--kube-version <version>',
      'Kubernetes version for .Capabilities (default v1.37.0, as helm offline)',
    )
    .option('--api-versions <group/version>', 'extra API version for .Capabilities (repeatable)', collect)
    .option('--include-crds', "include the chart's crds/ in the output")
    .option('--skip-tests', 'leave out test hooks')
    .option('--version <version>', "the packaged chart's version, checked against its Chart.yaml (.tgz only)")
    .addHelpText(
      'after',
      "\nThe release namespace is -n/--namespace (default 'default', as helm template offline).\nA repo/chart reference needs the cluster and is refused: pass a directory or a .tgz.",
    )
    .action(async (chart: string, opts: Omit<HelmChartFlags, 'namespace'>, cmd: Command) => {
      const { renderHelmChart } = await import('../helm-chart.ts');
      const { namespace } = cmd.optsWithGlobals<{ namespace?: string }>();
      process.stdout.write(await renderHelmChart(chart, { ...opts, namespace }));
    });
}
