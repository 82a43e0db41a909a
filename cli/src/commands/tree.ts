import type { KubeClient } from '@mooring/runtime';
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

/** Lines of a Kustomization's inventory under `indent`, child Kustomizations expanded once each. */
async function inventoryLines(
  client: KubeClient,
  namespace: string,
  name: string,
  indent: string,
): Promise<string[]> {
  const { KUSTOMIZE_GROUP, KUSTOMIZE_API_VERSION } = await import('@mooring/api');
  const { getKustomization } = await import('../render-local.ts');
  const lines: string[] = [];
  const seen = new Set<string>();
  const walk = async (ns: string, ksName: string, pad: string): Promise<void> => {
    seen.add(`${ns}/${ksName}`);
    const ks = await getKustomization(client, ns, ksName);
    const entries = ks.status?.inventory?.entries ?? [];
    const refs = entries.map((e) => parseInventoryId(e.id, e.v)).filter((r): r is InventoryRef => !!r);
    for (const [i, ref] of refs.entries()) {
      const last = i === refs.length - 1;
      lines.push(
        `${pad}${last ? '└── ' : '├── '}${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
      );
      const child = `${ref.namespace}/${ref.name}`;
      if (ref.group === KUSTOMIZE_GROUP && ref.kind === 'Kustomization' && !seen.has(child)) {
        const exists = await client.getOrUndefined({
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'Kustomization',
          namespace: ref.namespace,
          name: ref.name,
        });
        if (exists) await walk(ref.namespace, ref.name, `${pad}${last ? '    ' : '│   '}`);
      }
    }
  };
  await walk(namespace, name, indent);
  return lines;
}

/** `mooring tree kustomization|kustomizationset <name>`: what it applied, recursing into child Kustomizations. */
export function registerTree(program: Command): void {
  const tree = program.command('tree').description('print the objects a Kustomization or a fleet manages');
  tree
    .command('kustomization')
    .alias('ks')
    .argument('<name>', 'Kustomization name')
    .description('print the inventory of a Kustomization as a tree, with its child Kustomizations expanded')
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      await sessionOf(cmd).use(async (client, namespace) => {
        const lines = [
          `Kustomization/${namespace}/${name}`,
          ...(await inventoryLines(client, namespace, name, '')),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
  tree
    .command('kustomizationset')
    .alias('kss')
    .argument('<name>', 'KustomizationSet name')
    .description(
      'print a fleet: each member (cluster) with its rollout state, then what its Kustomization applied',
    )
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      const { KUSTOMIZE_API_VERSION } = await import('@mooring/api');
      await sessionOf(cmd).use(async (client, namespace) => {
        const set = await client.get<{
          apiVersion: string;
          kind: string;
          metadata: { name: string };
          status?: {
            members?: {
              name: string;
              kustomization: string;
              state: string;
              revision?: string;
              message?: string;
            }[];
          };
        }>({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet', namespace, name });
        const lines = [`KustomizationSet/${namespace}/${name}`];
        const members = set.status?.members ?? [];
        for (const [i, m] of members.entries()) {
          const last = i === members.length - 1;
          const note = m.state === 'Current' ? '' : `: ${m.message ?? ''}`;
          lines.push(
            `${last ? '└── ' : '├── '}${m.name} (${m.state}${m.revision ? ` ${m.revision}` : ''}${note})`,
          );
          const pad = last ? '    ' : '│   ';
          lines.push(`${pad}└── Kustomization/${namespace}/${m.kustomization}`);
          const exists = await client.getOrUndefined({
            apiVersion: KUSTOMIZE_API_VERSION,
            kind: 'Kustomization',
            namespace,
            name: m.kustomization,
          });
          if (exists) lines.push(...(await inventoryLines(client, namespace, m.kustomization, `${pad}    `)));
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
}
