import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface WhyFlags {
  output: string;
}

/** `mooring why <kind> <name>`: the chain of what stops a Kustomization or HelmRelease. */
export function registerWhy(program: Command): void {
  program
    .command('why')
    .description('show what stops a Kustomization or HelmRelease, hop by hop, e.g. why ks apps -n team')
    .argument('<object...>', "kind then name, e.g. 'ks apps', 'kustomization apps', 'hr db'")
    .option('-o, --output <format>', "'text' or 'json' (the chain as data)", 'text')
    .addHelpText(
      'after',
      [
        '',
        'Follows dependsOn (Kustomization and HelmRelease, recursively; a cycle is named), the source,',
        'the health check still waiting (on which object, with its kstatus message), the deletion budget,',
        'a suspended object or a KustomizationSet rollout that holds it back.',
        'Exit code 0 when it is Ready and nothing holds it back, 1 when it is blocked, 2 when the',
        'arguments are wrong or the object does not exist.',
        '',
      ].join('\n'),
    )
    .action(async (words: string[], flags: WhyFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR, EXIT_FAILURE } = await import('../cli-error.ts');
      const { requireKinds } = await import('../kinds.ts');
      const { getObject } = await import('../wait-reconcile.ts');
      const { chainLines } = await import('@mooring/kstatus');
      const { whyBlockedLive } = await import('../why-chain.ts');
      const { readyCondition } = await import('../object-status.ts');
      const { kinds, rest } = requireKinds(words, false);
      const def = kinds[0]!;
      if (def.kind !== 'Kustomization' && def.kind !== 'HelmRelease')
        throw new CliError(`why explains Kustomizations and HelmReleases, not ${def.kind}s.`, EXIT_ERROR);
      if (rest.length !== 1)
        throw new CliError(`give one ${def.singular} name: mooring why ${def.singular} <name>.`, EXIT_ERROR);
      if (flags.output !== 'text' && flags.output !== 'json')
        throw new CliError(`--output '${flags.output}' is not text or json.`, EXIT_ERROR);
      await sessionOf(cmd).use(async (client, namespace) => {
        const obj = await getObject(client, def, namespace, rest[0]!).catch((err: unknown) => {
          throw err instanceof CliError ? new CliError(err.message, EXIT_ERROR) : err;
        });
        const why = await whyBlockedLive(client, obj);
        if (flags.output === 'json') {
          process.stdout.write(`${JSON.stringify(why ?? { ready: true }, null, 2)}\n`);
        } else if (!why) {
          const ready = readyCondition(obj);
          process.stdout.write(`✔ ${def.kind} ${namespace}/${rest[0]} is Ready: ${ready?.message ?? ''}\n`);
        } else {
          process.stdout.write(`✗ ${why.sentence}\n`);
          for (const line of chainLines(why)) process.stdout.write(`  → ${line}\n`);
        }
        if (why) process.exitCode = EXIT_FAILURE;
      });
    });
}
