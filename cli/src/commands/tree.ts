import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

/** One inventory entry, parsed from `<namespace>_<name>_<group>_<kind>`. */
export interface InventoryRef {
  namespace: string;
  name: string;
  group: string;
  kind: string;
  version: string;
}

/** Parses an inventory id; Kubernetes names never hold `_`, so the split is unambiguous. */
export function parseInventoryId(id: string, version: string): InventoryRef | undefined {
  const parts = id.split('_');
  if (parts.length !== 4) return undefined;
  const [namespace, name, group, kind] = parts as [string, string, string, string];
  return { namespace, name, group, kind, version };
}

/** `mooring tree kustomization <name>`: what it applied, recursing into child Kustomizations. */
export function registerTree(program: Command): void {
  const tree = program.command('tree').description('print the objects a Kustomization manages');
  tree
    .command('kustomization')
    .alias('ks')
    .argument('<name>', 'Kustomization name')
    .description('print the inventory of a Kustomization as a tree, with its child Kustomizations expanded')
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      const { KUSTOMIZE_GROUP, KUSTOMIZE_API_VERSION } = await import('@mooring/api');
      const { getKustomization } = await import('../render-local.ts');
      await sessionOf(cmd).use(async (client, namespace) => {
        const lines: string[] = [`Kustomization/${namespace}/${name}`];
        const seen = new Set<string>();
        const walk = async (ns: string, ksName: string, indent: string): Promise<void> => {
          seen.add(`${ns}/${ksName}`);
          const ks = await getKustomization(client, ns, ksName);
          const entries = ks.status?.inventory?.entries ?? [];
          const refs = entries.map((e) => parseInventoryId(e.id, e.v)).filter((r): r is InventoryRef => !!r);
          for (const [i, ref] of refs.entries()) {
            const last = i === refs.length - 1;
            lines.push(
              `${indent}${last ? '└── ' : '├── '}${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
            );
            const child = `${ref.namespace}/${ref.name}`;
            if (ref.group === KUSTOMIZE_GROUP && ref.kind === 'Kustomization' && !seen.has(child)) {
              const exists = await client.getOrUndefined({
                apiVersion: KUSTOMIZE_API_VERSION,
                kind: 'Kustomization',
                namespace: ref.namespace,
                name: ref.name,
              });
              if (exists) await walk(ref.namespace, ref.name, `${indent}${last ? '    ' : '│   '}`);
            }
          }
        };
        await walk(namespace, name, '');
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
}
