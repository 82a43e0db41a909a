import type { KindDefinition } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import { sessionOf } from '../session.ts';
import { registerEvents } from './events.ts';
import { registerStats } from './stats.ts';
import { registerTree } from './tree.ts';

interface Target {
  def: KindDefinition;
  name?: string;
}

async function target(words: string[], all: boolean | undefined, verb: string): Promise<Target> {
  const { requireKinds } = await import('../kinds.ts');
  const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
  const { kinds, rest } = requireKinds(words, false);
  const def = kinds[0]!;
  if (rest.length > 1 || (!all && rest.length === 0) || (all && rest.length > 0))
    throw new CliError(
      `give one ${def.singular} name or --all: mooring ${verb} ${def.singular} <name>.`,
      EXIT_ERROR,
    );
  return { def, name: rest[0] };
}

function registerSuspendResume(program: Command, verb: 'suspend' | 'resume'): void {
  program
    .command(verb)
    .description(
      verb === 'suspend'
        ? 'stop reconciling an object (or --all of a kind) until resumed'
        : 'reconcile a suspended object again and wait for the result',
    )
    .argument('<kind...>', 'kind then name, e.g. ks apps')
    .option('--all', 'every object of the kind in the namespace')
    .option('--no-wait', 'resume: do not wait for the reconcile')
    .option('--timeout <duration>', 'resume: how long to wait', '5m')
    .action(
      async (words: string[], flags: { all?: boolean; wait: boolean; timeout: string }, cmd: Command) => {
        const { def, name } = await target(words, flags.all, verb);
        const { apiVersionOf } = await import('../kinds.ts');
        const { getObject, requestPatch, requestTimestamp, waitForReconciles } = await import(
          '../wait-reconcile.ts'
        );
        const { parseDuration } = await import('@mooring/runtime');
        await sessionOf(cmd).use(async (client, namespace) => {
          const names = name
            ? [(await getObject(client, def, namespace, name)).metadata.name!]
            : (await client.list(apiVersionOf(def), def.kind, { namespace })).items.map(
                (o) => o.metadata.name!,
              );
          // Resume every object first, then wait for them all: a Kustomization that depends on
          // another one resumed here becomes ready only once that one is.
          const requests = new Map<string, { requestedAt: string; object: KubeObject }>();
          for (const n of names) {
            const key = { apiVersion: apiVersionOf(def), kind: def.kind, namespace, name: n };
            if (verb === 'suspend') {
              await client.mergePatch(key, { spec: { suspend: true } });
              process.stdout.write(`✔ ${def.kind} ${namespace}/${n} suspended\n`);
              continue;
            }
            const requestedAt = requestTimestamp();
            const object = await client.mergePatch(key, {
              spec: { suspend: null },
              ...requestPatch(requestedAt),
            });
            requests.set(n, { requestedAt, object });
            process.stdout.write(`✔ ${def.kind} ${namespace}/${n} resumed\n`);
          }
          if (verb !== 'resume' || !flags.wait) return;
          await waitForReconciles(
            client,
            def,
            namespace,
            requests,
            parseDuration(flags.timeout),
            (n, outcome) => {
              if ('timedOut' in outcome) process.stdout.write(`✗ ${outcome.message}\n`);
              else
                process.stdout.write(
                  `${outcome.ready ? '✔' : '✗'} ${def.kind} ${namespace}/${n}: ${outcome.message}\n`,
                );
              if ('timedOut' in outcome || !outcome.ready) process.exitCode = 1;
            },
            { throughDependencies: true },
          );
        });
      },
    );
}

function registerDelete(program: Command): void {
  program
    .command('delete')
    .description('delete an object (what it applied follows its prune/deletionPolicy)')
    .argument('<kind...>', 'kind then name, e.g. source git app')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (words: string[], flags: { yes?: boolean }, cmd: Command) => {
      const { def, name } = await target(words, false, 'delete');
      const { apiVersionOf } = await import('../kinds.ts');
      const { confirm } = await import('../confirm.ts');
      const { getObject } = await import('../wait-reconcile.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        await getObject(client, def, namespace, name!);
        await confirm(`delete ${def.kind} ${namespace}/${name}?`, flags.yes);
        await client.delete({ apiVersion: apiVersionOf(def), kind: def.kind, namespace, name: name! });
        process.stdout.write(`✔ ${def.kind} ${namespace}/${name} deleted\n`);
      });
    });
}

// Server-owned metadata that a backup must not carry back into a cluster.
const DROPPED_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'finalizers',
  'ownerReferences',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
];

function registerExport(program: Command): void {
  program
    .command('export')
    .description('print clean YAML of objects for backup: export <kind|sources|images|all> [name]')
    .argument('<kind...>', 'kind or group, then an optional name')
    .option('-A, --all-namespaces', 'export from every namespace')
    .action(async (words: string[], flags: { allNamespaces?: boolean }, cmd: Command) => {
      const { requireKinds, apiVersionOf } = await import('../kinds.ts');
      const { yamlDocument } = await import('../apply-or-export.ts');
      const { RECONCILE_REQUESTED_AT_ANNOTATION } = await import('@mooring/api');
      const { kinds, rest } = requireKinds(words, true);
      await sessionOf(cmd).use(async (client, namespace) => {
        for (const def of kinds) {
          const list = await client.list(apiVersionOf(def), def.kind, {
            namespace: flags.allNamespaces ? undefined : namespace,
            fieldSelector: rest[0] ? `metadata.name=${rest[0]}` : undefined,
          });
          for (const obj of list.items) {
            const metadata = { ...obj.metadata };
            for (const k of DROPPED_METADATA) delete metadata[k];
            const annotations = { ...metadata.annotations };
            delete annotations[RECONCILE_REQUESTED_AT_ANNOTATION];
            delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
            metadata.annotations = Object.keys(annotations).length ? annotations : undefined;
            if (!metadata.annotations) delete metadata.annotations;
            process.stdout.write(
              yamlDocument({ apiVersion: obj.apiVersion, kind: obj.kind, metadata, spec: obj.spec }),
            );
          }
        }
      });
    });
}

/** Commands that act on existing objects: suspend, resume, delete, export, events, tree, stats. */
export function registerObjectCommands(program: Command): void {
  registerSuspendResume(program, 'suspend');
  registerSuspendResume(program, 'resume');
  registerDelete(program);
  registerExport(program);
  registerEvents(program);
  registerTree(program);
  registerStats(program);
}
