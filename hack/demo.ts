// The demo's report: which cluster runs, and which Mooring kinds it serves. The CLI issue grows
// this into the full GitOps demo (a Git server, the operators, a change promoted by commit).
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { repoRoot } from './lib/control-plane.ts';

interface Crd extends KubeObject {
  spec: {
    group: string;
    names: { kind: string; shortNames?: string[] };
    versions: { name: string; served: boolean }[];
  };
  status?: { conditions?: { type: string; status: string }[] };
}

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' } } });
const client = await KubeClient.fromKubeconfig(values.kubeconfig);
try {
  const version = await client.request<{ gitVersion: string; platform: string }>({
    method: 'GET',
    path: '/version',
  });
  console.log(`\nKubernetes ${version.gitVersion} (${version.platform}) is running.\n`);

  const crds = (await client.list<Crd>('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).items
    .filter((c) => c.spec.group.endsWith('mooring.dev'))
    .sort(
      (a, b) =>
        a.spec.group.localeCompare(b.spec.group) || a.spec.names.kind.localeCompare(b.spec.names.kind),
    );
  const rows = crds.map((c) => [
    c.spec.names.kind,
    `${c.spec.group}/${c.spec.versions
      .filter((v) => v.served)
      .map((v) => v.name)
      .join(',')}`,
    (c.spec.names.shortNames ?? []).join(','),
    c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ? 'yes' : 'no',
  ]);
  const table = [['KIND', 'API VERSION', 'SHORT NAMES', 'ESTABLISHED'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  console.log(`Mooring CRDs installed: ${crds.length}`);
  for (const row of table)
    console.log(`  ${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`.trimEnd());

  const kc = relative(process.cwd(), values.kubeconfig ?? '') || values.kubeconfig;
  console.log(`\nThe control plane keeps running. Try:`);
  console.log(`  export KUBECONFIG=${kc}`);
  console.log(`  ${relative(process.cwd(), `${repoRoot}/bin/kubectl`)} get crds`);
  console.log('  hack/control-plane down      # stop it and remove its data');
} finally {
  client.close();
}
