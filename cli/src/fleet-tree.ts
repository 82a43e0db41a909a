/** What `mooring tree kustomizationset` reads of one member in the set's status. */
export interface FleetMemberStatus {
  name: string;
  kustomization: string;
  kind?: 'Kustomization' | 'HelmRelease';
  state: string;
  appliedRevision?: string;
  releaseVersion?: number;
  revision?: string;
  message?: string;
  /** Delivery mode git: the member's file in the fleet repository, and the commit that wrote it. */
  path?: string;
  commit?: string;
}

/** The member's own line: its element, rollout state and revision, and why when not Current. */
export function memberHeadline(m: FleetMemberStatus): string {
  const note = m.state === 'Current' ? '' : `: ${m.message ?? ''}`;
  return `${m.name} (${m.state}${m.revision ? ` ${m.revision}` : ''}${note})`;
}

/**
 * The line under it: the object the member is. A member delivered through Git lives on its own
 * cluster, applied by that cluster's agent, so the line names the file and commit that carry it,
 * and there is no inventory to list here.
 */
export function memberObjectLine(
  m: FleetMemberStatus,
  namespace: string,
): { line: string; onThisCluster: boolean } {
  const kind = m.kind ?? 'Kustomization';
  if (m.path !== undefined) {
    const at = m.commit ? ` at ${m.commit.slice(0, 12)}` : ' (not committed yet)';
    return {
      line: `${kind}/${namespace}/${m.kustomization} in Git: ${m.path}${at}, applied by the cluster's agent`,
      onThisCluster: false,
    };
  }
  // Members written before sets made HelmReleases carry no kind: Kustomizations.
  const release =
    m.releaseVersion !== undefined ? ` (release v${m.releaseVersion}, chart ${m.appliedRevision})` : '';
  return { line: `${kind}/${namespace}/${m.kustomization}${release}`, onThisCluster: true };
}
