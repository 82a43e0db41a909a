import type { KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface CoreEvent extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
  involvedObject: { kind?: string; name?: string; namespace?: string };
}

/** `5s`, `3m`, `2h`, `4d`: how long ago, as kubectl shows it. */
export function age(since: string | undefined, now = Date.now()): string {
  if (!since) return '<unknown>';
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** `mooring events [--for Kind/name]`: Kubernetes events of Mooring objects, oldest first. */
export function registerEvents(program: Command): void {
  program
    .command('events')
    .description('show Kubernetes events of Mooring objects, e.g. events --for Kustomization/apps')
    .option('--for <Kind/name>', 'only events of this object')
    .option('-A, --all-namespaces', 'events from every namespace')
    .action(async (flags: { for?: string; allNamespaces?: boolean }, cmd: Command) => {
      const { KINDS } = await import('@mooring/api');
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      const { formatTable } = await import('../object-status.ts');
      const { matchKinds } = await import('../kinds.ts');
      let only: { kind: string; name: string } | undefined;
      if (flags.for) {
        const [kindWord, name] = flags.for.split('/');
        const kind = kindWord ? matchKinds([kindWord], false)?.kinds[0]?.kind : undefined;
        if (!kind || !name)
          throw new CliError(
            `--for '${flags.for}' is not Kind/name: write it as --for Kustomization/apps.`,
            EXIT_ERROR,
          );
        only = { kind, name };
      }
      const mooringKinds = new Set(KINDS.map((k) => k.kind));
      await sessionOf(cmd).use(async (client, namespace) => {
        const list = await client.list<CoreEvent>('v1', 'Event', {
          namespace: flags.allNamespaces ? undefined : namespace,
          fieldSelector: only
            ? `involvedObject.kind=${only.kind},involvedObject.name=${only.name}`
            : undefined,
        });
        const when = (e: CoreEvent): string =>
          e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '';
        const events = list.items
          .filter((e) => mooringKinds.has(e.involvedObject.kind ?? ''))
          .sort((a, b) => when(a).localeCompare(when(b)));
        if (events.length === 0) {
          process.stderr.write(`no events found${only ? ` for ${only.kind}/${only.name}` : ''}\n`);
          return;
        }
        const header = [
          ...(flags.allNamespaces ? ['NAMESPACE'] : []),
          'LAST SEEN',
          'TYPE',
          'REASON',
          'OBJECT',
          'MESSAGE',
        ];
        const rows = events.map((e) => [
          ...(flags.allNamespaces ? [e.metadata.namespace ?? ''] : []),
          age(when(e)),
          e.type ?? '',
          e.reason ?? '',
          `${e.involvedObject.kind}/${e.involvedObject.name}`,
          (e.message ?? '').replace(/\s+/g, ' '),
        ]);
        process.stdout.write(formatTable(header, rows));
      });
    });
}
