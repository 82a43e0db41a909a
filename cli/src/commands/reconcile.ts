import type { KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface ReconcileFlags {
  withSource?: boolean;
  force?: boolean;
  timeout: string;
}

type SourceRef = { kind: string; name: string; namespace?: string };

/**
 * What --with-source reconciles first: a Kustomization's spec.sourceRef; a HelmRelease's
 * spec.chartRef, else the HelmChart the operator keeps for its spec.chart (status.helmChart).
 */
function sourceOf(obj: KubeObject): SourceRef | undefined {
  const spec = obj.spec as { sourceRef?: SourceRef; chartRef?: SourceRef } | undefined;
  if (spec?.sourceRef) return spec.sourceRef;
  if (spec?.chartRef) return spec.chartRef;
  const chart = (obj.status as { helmChart?: string } | undefined)?.helmChart;
  const [namespace, name] = chart?.split('/') ?? [];
  return namespace && name ? { kind: 'HelmChart', namespace, name } : undefined;
}

/** `mooring reconcile <kind> <name> [--with-source] [--force]`: asks for a reconcile now and shows the result. */
export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .description('reconcile an object now and wait for the result, e.g. reconcile ks apps --with-source')
    .argument('<kind...>', "kind then name, e.g. 'source git app' or 'kustomization apps'")
    .option('--with-source', "reconcile the Kustomization's source first")
    .option(
      '--force',
      'HelmRelease only: a one-off install or upgrade even when nothing changed or the remediation retries ran out',
    )
    .option('--timeout <duration>', 'how long to wait', '5m')
    .action(async (words: string[], flags: ReconcileFlags, cmd: Command) => {
      const { requireKinds } = await import('../kinds.ts');
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      const { parseDuration } = await import('@mooring/runtime');
      const { KINDS } = await import('@mooring/api');
      const { getObject, reconcileAndWait } = await import('../wait-reconcile.ts');
      const { kinds, rest } = requireKinds(words, false);
      const def = kinds[0]!;
      const name = rest[0];
      if (!name || rest.length > 1)
        throw new CliError(
          `give one ${def.singular} name: mooring reconcile ${def.singular} <name>.`,
          EXIT_ERROR,
        );
      if (flags.force && def.kind !== 'HelmRelease')
        throw new CliError(
          `--force works on HelmReleases only: a ${def.kind} applies what its source holds on every reconcile.`,
          EXIT_ERROR,
        );
      const timeoutMs = parseDuration(flags.timeout);
      await sessionOf(cmd).use(async (client, namespace) => {
        const step = async (kind: typeof def, ns: string, n: string, force = false): Promise<boolean> => {
          process.stderr.write(
            `► annotating ${kind.kind} ${ns}/${n}${force ? ' (forced)' : ''}\n◎ waiting for ${kind.kind} reconciliation\n`,
          );
          const outcome = await reconcileAndWait(client, kind, ns, n, timeoutMs, { force });
          if (outcome.ready) {
            process.stdout.write(
              `✔ ${kind.kind} ${ns}/${n} reconciled${outcome.revision ? ` at revision ${outcome.revision}` : ''}: ${outcome.message}\n`,
            );
          } else {
            process.stdout.write(`✗ ${kind.kind} ${ns}/${n} is not ready: ${outcome.message}\n`);
          }
          return outcome.ready;
        };
        if (flags.withSource) {
          const obj = await getObject(client, def, namespace, name);
          const ref = sourceOf(obj);
          const srcDef = KINDS.find((k) => k.kind === ref?.kind);
          if (!ref || !srcDef)
            throw new CliError(
              `${def.kind} ${namespace}/${name} has no source to reconcile: drop --with-source.`,
              EXIT_ERROR,
            );
          if (!(await step(srcDef, ref.namespace ?? namespace, ref.name))) {
            process.exitCode = 1;
            return;
          }
        }
        if (!(await step(def, namespace, name, !!flags.force))) process.exitCode = 1;
      });
    });
}
