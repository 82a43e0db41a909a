// One KustomizationSet over 50 simulated clusters: 50 cluster Secrets whose kubeconfigs all name one
// control plane of the bench's own (a plain API server standing in for 50, each "cluster" applying into a
// namespace of its own), rolled out in two waves (5 staging clusters, then 45 with maxUnavailable
// 50%). Measures the time until all 50 are Ready, the time to roll one change across all of them,
// and the RSS of this process (operators and driver together, in-process).
// Usage: npm run bench -- fleet   (or node --import tsx operators/kustomize/bench/fleet.bench.ts)

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, uniqueName } from '@mooring/test/harness';
import { down, locationAt, up } from '../../../hack/lib/control-plane.ts';
import { gitSource, startStack } from '../test/fixture.ts';

const CLUSTERS = Number(process.env.MOORING_BENCH_CLUSTERS ?? 50);
const log = (line: string) => process.stderr.write(`fleet: ${line}\n`);
const SET = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet' };

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 200);

// A control plane of the bench's own: the shared test plane may be restarted by a suite meanwhile.
const planeDir = await mkdtemp(join(tmpdir(), 'mooring-fleet-bench-'));
const plane = await up(locationAt(planeDir), log);
process.env.KUBECONFIG = plane.kubeconfig;
const { client, kubeconfig } = await testCluster();
const stack = await startStack('fleet-bench', ['--concurrent', '10']);
const ns = stack.namespace;
const target = uniqueName('fb');
try {
  const text = await readFile(kubeconfig, 'utf8');
  for (let i = 0; i < CLUSTERS; i++) {
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `c${i}`,
        namespace: ns,
        labels: { 'mooring.dev/cluster': `c${i}`, env: i < 5 ? 'staging' : 'prod' },
      },
      stringData: { value: text },
    } as KubeObject);
  }
  const { name: source } = await gitSource(stack, {
    'agent/all.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: \${target}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: agent
  namespace: \${target}
data:
  cluster: \${cluster}
  version: \${version}
`,
  });
  const template = (version: string) => ({
    metadata: { name: 'agent-{{ .cluster.name }}' },
    spec: {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'agent',
      interval: '10m',
      retryInterval: '5s',
      prune: true,
      kubeConfig: { secretRef: { name: '{{ .cluster.secretName }}' } },
      postBuild: {
        substitute: { target: `${target}-{{ .cluster.name }}`, cluster: '{{ .cluster.name }}', version },
      },
    },
  });
  const status = async () =>
    (
      await client.get<
        KubeObject & {
          status?: {
            observedGeneration?: number;
            counts?: { current: number };
            conditions?: { type: string; status: string }[];
          };
        }
      >({ ...SET, namespace: ns, name: 'agents' })
    ).status;
  const allCurrent = async (label: string, generation: number) => {
    const started = performance.now();
    for (;;) {
      const s = await status();
      const ready = s?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (ready && s?.observedGeneration === generation && s?.counts?.current === CLUSTERS)
        return (performance.now() - started) / 1000;
      if (performance.now() - started > 900_000) throw new Error(`${label}: not converged after 15 min`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const t0 = performance.now();
  const created = await client.create({
    ...SET,
    metadata: { name: 'agents', namespace: ns },
    spec: {
      interval: '5m',
      generators: [{ clusters: {} }],
      strategy: {
        rollingUpdate: {
          steps: [{ selector: { matchLabels: { env: 'staging' } } }, { maxUnavailable: '50%' }],
        },
      },
      template: template('v1'),
    },
  } as KubeObject);
  const install = await allCurrent('install', created.metadata.generation ?? 1);
  log(`install: ${install.toFixed(1)} s`);
  const patched = await client.mergePatch(
    { ...SET, namespace: ns, name: 'agents' },
    { spec: { template: template('v2') } },
  );
  const rollout = await allCurrent('rollout', patched.metadata.generation ?? 2);
  log(`rollout: ${rollout.toFixed(1)} s`);
  const total = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  console.log(`## Fleet: one KustomizationSet over ${CLUSTERS} simulated clusters

${CLUSTERS} cluster Secrets whose kubeconfigs name the same local API server (each "cluster" applies a
Namespace and a ConfigMap into a namespace of its own), source and kustomize operators in this process
(\`--concurrent 10\`), waves: 5 staging clusters, then 45 with \`maxUnavailable: 50%\`, no soak time.
Load average at the end: ${loadavg()[0]!.toFixed(1)} on 2 cores.

| measure | value |
| --- | --- |
| create the set → all ${CLUSTERS} Kustomizations Ready (all created at once) | ${install.toFixed(1)} s |
| one template change → all ${CLUSTERS} at the new revision, in 2 waves (the second in 50% batches) | ${rollout.toFixed(1)} s |
| total | ${total.toFixed(1)} s |
| peak RSS of the process (operators and driver) | ${Math.round(peakRss / 1024 / 1024)} MB |

Not measured: 50 separate API servers (2 cores cannot hold them; the per-cluster isolation is
what \`operators/kustomize/test/kustomization-set.test.ts\` checks on three real planes).
`);
} finally {
  clearInterval(sampler);
  // The plane is the bench's own: stopping it removes every object the bench made.
  await stack.stop();
  await down(locationAt(planeDir));
  await rm(planeDir, { recursive: true, force: true });
}
process.exit(0);
