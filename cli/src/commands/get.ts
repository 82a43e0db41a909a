import type { KindDefinition } from '@mooring/api';
import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface GetFlags {
  allNamespaces?: boolean;
  watch?: boolean;
  statusSelector?: string;
}

/** `--status-selector ready=false`: a condition type and status, both matched case-insensitively. */
function statusSelector(
  value: string | undefined,
): ((obj: import('@mooring/runtime').KubeObject) => boolean) | undefined {
  if (value === undefined) return undefined;
  const m = /^([A-Za-z]+)=(true|false|unknown)$/i.exec(value.trim());
  if (!m) return undefined;
  const [type, status] = [m[1]!.toLowerCase(), m[2]!.toLowerCase()];
  return (obj) => {
    const conditions = (obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)
      ?.conditions;
    const condition = conditions?.find((c) => c.type?.toLowerCase() === type);
    // An object not reconciled yet has no condition; its status counts as Unknown.
    return (condition?.status ?? 'Unknown').toLowerCase() === status;
  };
}

/** `mooring get <kind|sources|images|all> [name]`: a status table, `-A` for every namespace, `--watch` to follow. */
export function registerGet(program: Command): void {
  program
    .command('get')
    .description('show status: get sources|kustomizations|receivers|alerts|providers|images|all [name]')
    .argument('<kind...>', "kind or group, e.g. 'sources', 'source git', 'ks', 'all', then an optional name")
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-w, --watch', 'keep printing changes until interrupted')
    .option(
      '--status-selector <type=status>',
      'only objects whose condition has this status, e.g. ready=false',
    )
    .action(async (words: string[], flags: GetFlags, cmd: Command) => {
      const { requireKinds, apiVersionOf } = await import('../kinds.ts');
      const selected = statusSelector(flags.statusSelector);
      if (flags.statusSelector !== undefined && !selected) {
        const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
        throw new CliError(
          `--status-selector '${flags.statusSelector}' is not <condition>=<True|False|Unknown>: write e.g. --status-selector ready=false.`,
          EXIT_ERROR,
        );
      }
      const { formatTable, sourceWithoutArtifact, statusRow, withSourceReason } = await import(
        '../object-status.ts'
      );
      const { SOURCE_API_VERSION } = await import('@mooring/api');
      const match = requireKinds(words, true);
      const name = match.rest[0];
      const session = sessionOf(cmd);
      await session.use(async (client, ns) => {
        const namespace = flags.allNamespaces ? undefined : ns;
        const many = match.kinds.length > 1;
        const header = [
          ...(flags.allNamespaces ? ['NAMESPACE'] : []),
          'NAME',
          'REVISION',
          'SUSPENDED',
          'READY',
          'MESSAGE',
        ];
        const toRow = async (
          def: KindDefinition,
          obj: import('@mooring/runtime').KubeObject,
        ): Promise<string[]> => {
          const s = statusRow(obj);
          // "has no artifact yet" alone does not say why: add the reason the source gives.
          const waitingFor = def.kind === 'Kustomization' ? sourceWithoutArtifact(s.message) : undefined;
          if (waitingFor) {
            const source = await client.getOrUndefined({
              apiVersion: SOURCE_API_VERSION,
              kind: waitingFor.kind,
              namespace: waitingFor.namespace,
              name: waitingFor.name,
            });
            s.message = withSourceReason(s.message, source);
          }
          const shown = many ? `${def.singular}/${obj.metadata.name}` : (obj.metadata.name ?? '');
          return [
            ...(flags.allNamespaces ? [obj.metadata.namespace ?? ''] : []),
            shown,
            s.revision,
            s.suspended,
            s.ready,
            s.message,
          ];
        };
        const rows: string[][] = [];
        const versions = new Map<KindDefinition, string | undefined>();
        let listed = 0;
        for (const def of match.kinds) {
          const list = await client.list(apiVersionOf(def), def.kind, {
            namespace,
            fieldSelector: name ? `metadata.name=${name}` : undefined,
          });
          versions.set(def, list.metadata.resourceVersion);
          listed += list.items.length;
          for (const obj of list.items) if (!selected || selected(obj)) rows.push(await toRow(def, obj));
        }
        const where = flags.allNamespaces ? 'any namespace' : `namespace ${ns}`;
        // A named object that does not exist is a failure, as in Flux and kubectl; an empty list is not.
        if (name && listed === 0) {
          const { CliError } = await import('../cli-error.ts');
          const kinds = match.kinds.map((k) => k.kind).join(' or ');
          const plural = match.kinds.length === 1 ? match.kinds[0]!.plural : words[0];
          throw new CliError(
            `${kinds} ${name} not found in ${where}: list them with 'mooring get ${plural}${flags.allNamespaces ? ' -A' : ` -n ${ns}`}'.`,
          );
        }
        if (rows.length === 0 && !flags.watch) {
          const what = name ? `${match.kinds.map((k) => k.kind).join(' or ')} ${name}` : 'objects';
          process.stderr.write(`no ${what} found in ${where}\n`);
          return;
        }
        process.stdout.write(formatTable(header, rows));
        if (!flags.watch) return;
        // Follow every kind at once; each change prints one more row, as `kubectl get -w` does.
        const stop = new AbortController();
        process.once('SIGINT', () => stop.abort());
        process.once('SIGTERM', () => stop.abort());
        await Promise.all(
          match.kinds.map(async (def) => {
            try {
              for await (const ev of client.watch(apiVersionOf(def), def.kind, {
                namespace,
                fieldSelector: name ? `metadata.name=${name}` : undefined,
                resourceVersion: versions.get(def),
                signal: stop.signal,
              })) {
                if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
                if (selected && ev.type !== 'DELETED' && !selected(ev.object)) continue;
                const row = await toRow(def, ev.object);
                if (ev.type === 'DELETED') row[row.length - 1] = '(deleted)';
                process.stdout.write(formatTable(header, [row]).split('\n')[1]!.concat('\n'));
              }
            } catch (err) {
              if (!stop.signal.aborted) throw err;
            }
          }),
        );
      });
    });
}
