import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

/** Bytes as `12.3 KiB`. */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** `mooring stats`: per kind, how many objects, how many failing or suspended, artifact storage. */
export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('count objects per kind: reconcilers, running, failing, suspended, storage')
    .option('-A, --all-namespaces', 'count across all namespaces')
    .action(async (flags: { allNamespaces?: boolean }, cmd: Command) => {
      const { KINDS } = await import('@mooring/api');
      const { apiVersionOf } = await import('../kinds.ts');
      const { formatTable, readyCondition } = await import('../object-status.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const rows: string[][] = [];
        for (const def of KINDS) {
          const { items } = await client.list(apiVersionOf(def), def.kind, {
            namespace: flags.allNamespaces ? undefined : namespace,
          });
          let failing = 0;
          let suspended = 0;
          let bytes = 0;
          let hasStorage = false;
          for (const obj of items) {
            if ((obj.spec as { suspend?: boolean } | undefined)?.suspend) suspended++;
            if (readyCondition(obj)?.status === 'False') failing++;
            const size = (obj.status as { artifact?: { size?: number } } | undefined)?.artifact?.size;
            if (typeof size === 'number') {
              bytes += size;
              hasStorage = true;
            }
          }
          rows.push([
            def.kind,
            String(items.length),
            String(items.length - failing - suspended),
            String(failing),
            String(suspended),
            hasStorage || def.group.startsWith('source.') ? humanBytes(bytes) : '-',
          ]);
        }
        process.stdout.write(
          formatTable(['KIND', 'RECONCILERS', 'RUNNING', 'FAILING', 'SUSPENDED', 'STORAGE'], rows),
        );
      });
    });
}
