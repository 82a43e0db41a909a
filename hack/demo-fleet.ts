// The demo's fleet step: a second local cluster (a private control plane of its own) beside the
// demo's, both registered as cluster Secrets, and one KustomizationSet with the `clusters`
// generator that installs the same node agent on each, with each cluster's region as a label.
import { readFile, rm } from 'node:fs/promises';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { down, locationAt, type Running, up } from './lib/control-plane.ts';

/** Where the fleet's agent runs on every cluster (not the Helm agent's namespace: each its own owner). */
export const FLEET_NS = 'fleet-agents';
export const FLEET_SET = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet', name: 'node-agent' };

/** What the fleet step leaves with Mooring's finalizer: the set, and the cluster Secrets it reads. */
export const FLEET_FINALIZED = [
  [FLEET_SET.apiVersion, FLEET_SET.kind],
  ['v1', 'Secret', 'mooring.dev/cluster'],
] as const;

/** The agent as the platform repository keeps it under fleet/node-agent: `${cluster}`, `${region}` per cluster. */
export const FLEET_FILES: Record<string, string> = {
  'fleet/node-agent/kustomization.yaml': 'resources:\n  - namespace.yaml\n  - node-agent.yaml\n',
  'fleet/node-agent/namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${FLEET_NS}\n`,
  'fleet/node-agent/node-agent.yaml': `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-agent
  namespace: ${FLEET_NS}
  labels:
    cluster: "\${cluster}"
    region: "\${region}"
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata:
      labels: {app: node-agent, region: "\${region}"}
    spec:
      containers: [{name: agent, image: 'quay.io/prometheus/node-exporter:v1.12.1'}]
`,
};

/** A second control plane, started in the background while the demo's first steps run. */
export interface SecondCluster {
  /** Settles once the plane answers (or failed to start), with how long it took to start. */
  ready: Promise<Running & { startMs: number }>;
  /** Stops the plane and removes its data; safe to call whether or not it started. */
  stop(): Promise<void>;
}

export function startSecondCluster(dir: string): SecondCluster {
  const loc = locationAt(dir);
  const started = Date.now();
  const ready = up(loc, () => {}).then((running) => ({ ...running, startMs: Date.now() - started }));
  // A failure is reported when the fleet step awaits it, not as an unhandled rejection meanwhile.
  ready.catch(() => {});
  return {
    ready,
    async stop() {
      await ready.catch(() => {});
      await down(loc);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The Secret the `clusters` generator reads: its kubeconfig under `value`, its labels as parameters. */
export async function clusterSecret(
  namespace: string,
  name: string,
  kubeconfig: string,
  labels: Record<string, string>,
): Promise<KubeObject> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `cluster-${name}`, namespace, labels: { 'mooring.dev/cluster': name, ...labels } },
    stringData: { value: await readFile(kubeconfig, 'utf8') },
  } as KubeObject;
}

/** One Kustomization per registered cluster, applying fleet/node-agent there with its labels. */
export function fleetSet(namespace: string, source: string): KubeObject {
  return {
    apiVersion: FLEET_SET.apiVersion,
    kind: FLEET_SET.kind,
    metadata: { name: FLEET_SET.name, namespace },
    spec: {
      interval: '10s',
      generators: [{ clusters: {} }],
      template: {
        metadata: {
          name: 'node-agent-{{ .cluster.name }}',
          labels: { region: '{{ .cluster.labels.region }}' },
        },
        spec: {
          sourceRef: { kind: 'GitRepository', name: source },
          path: './fleet/node-agent',
          interval: '1m',
          retryInterval: '2s',
          prune: true,
          kubeConfig: { secretRef: { name: '{{ .cluster.secretName }}' } },
          postBuild: {
            substitute: { cluster: '{{ .cluster.name }}', region: '{{ .cluster.labels.region }}' },
          },
        },
      },
    },
  } as KubeObject;
}

interface FleetStatus {
  conditions?: { type: string; status: string }[];
  members?: { name: string; ready: string }[];
  counts?: { total: number; current: number };
}

/** The set's status once it is Ready with `members` members all current, else undefined. */
export async function fleetReady(
  client: KubeClient,
  namespace: string,
  members: number,
): Promise<FleetStatus | undefined> {
  const set = await client.get<KubeObject & { status?: FleetStatus }>({ ...FLEET_SET, namespace });
  const s = set.status;
  const ready = s?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return ready && s?.counts?.total === members && s.counts.current === members ? s : undefined;
}

/** The agent's DaemonSet on one cluster, as `cluster=… region=…`, or undefined while it is not there. */
export async function agentOn(client: KubeClient): Promise<string | undefined> {
  const ds = await client.getOrUndefined({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    namespace: FLEET_NS,
    name: 'node-agent',
  });
  const labels = ds?.metadata.labels;
  return labels ? `cluster=${labels.cluster} region=${labels.region}` : undefined;
}
