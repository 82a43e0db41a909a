import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface TraceFlags {
  apiVersion?: string;
}

/** `mooring trace <kind> <name>`: which Kustomization or HelmRelease applied an object, from which source, up to the top. */
export function registerTrace(program: Command): void {
  program
    .command('trace')
    .description(
      'show which Kustomization or HelmRelease and which sources manage an object, e.g. trace deployment web -n apps',
    )
    .argument(
      '<object...>',
      "kind and name as kubectl spells them, e.g. 'deployment web', 'Deployment/web', 'deployments.apps web', 'ks apps'",
    )
    .option('--api-version <version>', 'API version of the kind (e.g. apps/v1) when its name is ambiguous')
    .addHelpText(
      'after',
      "\nExit code 1 when the object is not managed by Mooring or the chain is broken: a Kustomization,\nHelmRelease or source that does not exist, or an object that carries owner labels but is missing\nfrom the inventory (a HelmRelease's hooks are in none, and are not a break).\n",
    )
    .action(async (words: string[], flags: TraceFlags, cmd: Command) => {
      const { CliError } = await import('../cli-error.ts');
      const { computeStatus } = await import('@mooring/kstatus');
      const { parseTraceTarget, resolveKind } = await import('../trace-kind.ts');
      const { ownerLabels, traceChain } = await import('../trace-chain.ts');
      const { formatTrace } = await import('../trace-format.ts');
      const target = parseTraceTarget(words);
      await sessionOf(cmd).use(async (client, namespace) => {
        const served = await resolveKind(client, target.kind, flags.apiVersion ?? target.apiVersion);
        const ns = served.namespaced ? namespace : undefined;
        const shown = `${served.kind} ${ns ? `${ns}/` : ''}${target.name}`;
        const obj = await client.getOrUndefined({
          apiVersion: served.apiVersion,
          kind: served.kind,
          namespace: ns,
          name: target.name,
        });
        if (!obj)
          throw new CliError(
            `${shown} not found: list them with 'kubectl get ${served.plural}${ns ? ` -n ${ns}` : ''}'.`,
          );
        if (!ownerLabels(obj))
          throw new CliError(
            `${shown} is not managed by Mooring: it has no kustomize.mooring.dev/name or helm.mooring.dev/name label, so no Kustomization or HelmRelease applied it.`,
          );
        const report = formatTrace(await traceChain(client, obj), computeStatus(obj));
        process.stdout.write(report.text);
        if (report.problem) throw new CliError(report.problem);
      });
    });
}
