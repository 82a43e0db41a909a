import type { ResourceInventory } from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import { type FleetMemberStatus, memberHeadline, memberObjectLine } from '../fleet-tree.ts';
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

/** A kind whose `status.inventory` lists what it applied: the two appliers `tree` recurses into. */
type ApplierKind = 'Kustomization' | 'HelmRelease';

/** The applier an inventory entry names, if it is one. */
async function applierOf(ref: InventoryRef): Promise<ApplierKind | undefined> {
  const { HELM_GROUP, KUSTOMIZE_GROUP } = await import('@mooring/api');
  if (ref.group === KUSTOMIZE_GROUP && ref.kind === 'Kustomization') return 'Kustomization';
  if (ref.group === HELM_GROUP && ref.kind === 'HelmRelease') return 'HelmRelease';
  return undefined;
}

/**
 * Lines of an applier's inventory under `indent`, the Kustomizations and HelmReleases it applied
 * expanded once each (a HelmRelease's inventory is its deployed release's objects).
 */
async function inventoryLines(
  client: KubeClient,
  kind: ApplierKind,
  namespace: string,
  name: string,
  indent: string,
): Promise<string[]> {
  const { HELM_API_VERSION, KUSTOMIZE_API_VERSION } = await import('@mooring/api');
  const apiVersionOf = (k: ApplierKind) => (k === 'Kustomization' ? KUSTOMIZE_API_VERSION : HELM_API_VERSION);
  const lines: string[] = [];
  const seen = new Set<string>();
  const walk = async (k: ApplierKind, ns: string, objName: string, pad: string): Promise<void> => {
    seen.add(`${k}/${ns}/${objName}`);
    const obj = await client.getOrUndefined<KubeObject & { status?: { inventory?: ResourceInventory } }>({
      apiVersion: apiVersionOf(k),
      kind: k,
      namespace: ns,
      name: objName,
    });
    const entries = obj?.status?.inventory?.entries ?? [];
    const refs = entries.map((e) => parseInventoryId(e.id, e.v)).filter((r): r is InventoryRef => !!r);
    for (const [i, ref] of refs.entries()) {
      const last = i === refs.length - 1;
      lines.push(
        `${pad}${last ? '└── ' : '├── '}${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
      );
      const child = await applierOf(ref);
      if (child && !seen.has(`${child}/${ref.namespace}/${ref.name}`))
        await walk(child, ref.namespace, ref.name, `${pad}${last ? '    ' : '│   '}`);
    }
  };
  await walk(kind, namespace, name, indent);
  return lines;
}

/** `mooring tree kustomization|helmrelease|kustomizationset <name>`: what it applied, recursing into the Kustomizations and HelmReleases it applied. */
export function registerTree(program: Command): void {
  const tree = program
    .command('tree')
    .description('print the objects a Kustomization, a HelmRelease or a fleet manages');
  tree
    .command('kustomization')
    .alias('ks')
    .argument('<name>', 'Kustomization name')
    .description(
      'print the inventory of a Kustomization as a tree, with the Kustomizations and HelmReleases it applied expanded',
    )
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      await sessionOf(cmd).use(async (client, namespace) => {
        const { getKustomization } = await import('../render-local.ts');
        await getKustomization(client, namespace, name); // not found: the command that lists them
        const lines = [
          `Kustomization/${namespace}/${name}`,
          ...(await inventoryLines(client, 'Kustomization', namespace, name, '')),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
  tree
    .command('helmrelease')
    .alias('hr')
    .argument('<name>', 'HelmRelease name')
    .description(
      "print the objects of a HelmRelease's deployed release as a tree, with the Kustomizations and HelmReleases among them expanded",
    )
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      await sessionOf(cmd).use(async (client, namespace) => {
        const { getHelmRelease } = await import('../release-history.ts');
        const hr = await getHelmRelease(client, namespace, name);
        const latest = hr.status?.history?.[0];
        const release = latest
          ? ` (release ${latest.namespace}/${latest.name} v${latest.version} ${latest.status}, chart ${latest.chartName}@${latest.chartVersion})`
          : ' (nothing released yet)';
        const lines = [
          `HelmRelease/${namespace}/${name}${release}`,
          ...(await inventoryLines(client, 'HelmRelease', namespace, name, '')),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
  tree
    .command('kustomizationset')
    .alias('kss')
    .argument('<name>', 'KustomizationSet name')
    .description(
      'print a fleet: each member (cluster) with its rollout state, then what its Kustomization or HelmRelease applied',
    )
    .action(async (name: string, _flags: unknown, cmd: Command) => {
      const { HELM_API_VERSION, KUSTOMIZE_API_VERSION } = await import('@mooring/api');
      await sessionOf(cmd).use(async (client, namespace) => {
        const set = await client.get<{
          apiVersion: string;
          kind: string;
          metadata: { name: string };
          status?: { members?: FleetMemberStatus[] };
        }>({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet', namespace, name });
        const lines = [`KustomizationSet/${namespace}/${name}`];
        const members = set.status?.members ?? [];
        for (const [i, m] of members.entries()) {
          const last = i === members.length - 1;
          lines.push(`${last ? '└── ' : '├── '}${memberHeadline(m)}`);
          const pad = last ? '    ' : '│   ';
          const { line, onThisCluster } = memberObjectLine(m, namespace);
          lines.push(`${pad}└── ${line}`);
          if (!onThisCluster) continue;
          const kind = m.kind ?? 'Kustomization';
          const exists = await client.getOrUndefined({
            apiVersion: kind === 'HelmRelease' ? HELM_API_VERSION : KUSTOMIZE_API_VERSION,
            kind,
            namespace,
            name: m.kustomization,
          });
          if (exists)
            lines.push(...(await inventoryLines(client, kind, namespace, m.kustomization, `${pad}    `)));
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
}
