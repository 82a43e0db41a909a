import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

/** `mooring build <dir>` and `mooring build kustomization <name> --path <dir>`. */
export function registerBuild(program: Command): void {
  const buildCmd = program
    .command('build')
    .description(
      'render manifests locally: build <dir> is `kustomize build`; build kustomization renders as the operator would',
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
}
