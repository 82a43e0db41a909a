// A HelmRelease's revisions read from Helm's own release records, for `mooring history` and
// `mooring rollback`.
import { HELM_API_VERSION, type HelmRelease, releaseNameOf, releaseStorageNamespace } from '@mooring/api';
import { ReleaseStore } from '@mooring/helm';
import type { KubeClient } from '@mooring/runtime';
import { CliError } from './cli-error.ts';

/** One revision as `helm history` shows it. */
export interface RevisionRow {
  revision: number;
  updated: string;
  status: string;
  chart: string;
  appVersion: string;
  description: string;
}

export interface ReleaseHistory {
  release: string;
  storageNamespace: string;
  revisions: RevisionRow[];
}

/** The HelmRelease `name` in `namespace`, or a CliError that says how to find one. */
export async function getHelmRelease(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<HelmRelease> {
  const hr = await client.getOrUndefined<HelmRelease>({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    namespace,
    name,
  });
  if (!hr)
    throw new CliError(
      `HelmRelease ${namespace}/${name} not found: list them with 'mooring get helmreleases -n ${namespace}'.`,
    );
  return hr;
}

/** The release's records, oldest first, where the operator keeps them (status first, then the spec's rule). */
export async function releaseHistory(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<ReleaseHistory> {
  const hr = await getHelmRelease(client, namespace, name);
  const release = hr.status?.history?.[0]?.name ?? releaseNameOf(hr);
  const storageNamespace = hr.status?.storageNamespace ?? releaseStorageNamespace(hr);
  const records = await new ReleaseStore(client, { namespace: storageNamespace }).history(release);
  return {
    release,
    storageNamespace,
    revisions: records.map((r) => ({
      revision: r.version,
      updated: r.info.last_deployed ?? r.info.first_deployed ?? '',
      status: r.info.status ?? 'unknown',
      chart: r.chart?.metadata ? `${r.chart.metadata.name}-${r.chart.metadata.version}` : '',
      appVersion: r.chart?.metadata?.appVersion ?? '',
      description: r.info.description ?? '',
    })),
  };
}

/** `helm history`'s columns, newest last as helm prints them. */
export function formatHistory(release: string, storageNamespace: string, rows: RevisionRow[]): string {
  if (rows.length === 0) return `release ${storageNamespace}/${release} has no revisions yet\n`;
  const header = ['REVISION', 'UPDATED', 'STATUS', 'CHART', 'APP VERSION', 'DESCRIPTION'];
  const cells = rows.map((r) => [
    String(r.revision),
    r.updated,
    r.status,
    r.chart,
    r.appVersion,
    r.description,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[header, ...cells].map(line).join('\n')}\n`;
}
