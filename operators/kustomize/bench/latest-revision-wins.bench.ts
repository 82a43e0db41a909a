// Latest revision wins (issue #23 §3): a Kustomization with `wait` and a 10-minute timeout applies
// a revision whose Deployment never becomes Available (a node selector no kwok node has); while
// its health wait runs, the fix is pushed. Measured: from the fix's push (the commit and the
// GitRepository's reconcile request, what a push webhook does) to the Kustomization Ready at the
// fix's revision. Without cancellation that figure would include the rest of the 10 minutes.
// Source and kustomize operators in this process, on the test control plane with workloads.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  GitServer,
  startInProcessOperators,
  testCluster,
  uniqueName,
} from '@mooring/test/harness';

const TRIALS = Number(process.env.MOORING_BENCH_TRIALS ?? 3);
const log = (line: string) => process.stderr.write(`latest-revision-wins: ${line}\n`);

const deployment = (broken: boolean) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:${broken ? '\n      nodeSelector: {mooring.dev/no-such-node: "true"}' : ''}
      containers: [{name: app, image: registry.invalid/app:1}]
`;

interface Ks extends KubeObject {
  status?: {
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    conditions?: { type: string; status: string; message: string }[];
  };
}

const { client, kubeconfig } = await testCluster({ workloads: true });
const namespace = uniqueName('bench-lrw');
await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
const git = await GitServer.start();
const storage = await mkdtemp(join(tmpdir(), 'mooring-bench-'));
const operators = await startInProcessOperators(
  [sourceOperator(), kustomizeOperator()],
  namespace,
  ['--storage-path', storage, '--storage-addr', '127.0.0.1:0'],
  { kubeconfig },
);
const figures: number[] = [];
try {
  for (let t = 0; t < TRIALS; t++) {
    const name = `app-${t}`;
    const repo = await git.createRepo(name);
    await repo.commit({ 'deploy/app.yaml': deployment(false) });
    await client.create({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name, namespace },
      spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
    } as KubeObject);
    await client.create({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name, namespace },
      spec: {
        sourceRef: { kind: 'GitRepository', name },
        path: './deploy',
        interval: '1h',
        timeout: '10m',
        prune: true,
        wait: true,
        targetNamespace: namespace,
      },
    } as KubeObject);
    const key = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace, name };
    const ready = (k: Ks) => k.status?.conditions?.find((c) => c.type === 'Ready');
    await eventually(
      'first revision Ready',
      async () => ready(await client.get<Ks>(key))?.status === 'True',
      60_000,
    );
    const push = async (broken: boolean) => {
      const commit = await repo.commit({ 'deploy/app.yaml': deployment(broken) });
      await client.mergePatch(
        { apiVersion: SOURCE_API_VERSION, kind: 'GitRepository', namespace, name },
        { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}` } } },
      );
      return `main@sha1:${commit}`;
    };
    const broken = await push(true);
    await eventually(
      'the broken revision waiting on health',
      async () => {
        const k = await client.get<Ks>(key);
        return k.status?.lastAttemptedRevision === broken && /become healthy/.test(ready(k)?.message ?? '');
      },
      60_000,
    );
    const pushed = performance.now();
    const fix = await push(false);
    await eventually(
      'the fix Ready',
      async () => {
        const k = await client.get<Ks>(key);
        return k.status?.lastAppliedRevision === fix && ready(k)?.status === 'True';
      },
      120_000,
    );
    const ms = performance.now() - pushed;
    figures.push(ms);
    log(`trial ${t + 1}: fix applied and Ready ${Math.round(ms)} ms after its push`);
  }
} finally {
  await operators.stop();
  await git.close();
  await rm(storage, { recursive: true, force: true });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
}

const sorted = [...figures].sort((a, b) => a - b);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
process.stdout.write(`## Latest revision wins: a fix pushed during a stuck health wait

A Kustomization (\`wait: true\`, \`timeout: 10m\`) applies a revision whose Deployment never becomes
Available (a node selector no kwok node has); while its health wait runs, the fix is pushed (commit,
then the GitRepository's reconcile request, as a push webhook makes it). Measured from that push to
the Kustomization Ready at the fix's revision, with the fix's Deployment rolled out on kwok's nodes.
The watch on the GitRepository's new artifact cancels the wait of the broken revision (Ready
Superseded, an event), and the fix is reconciled at once, so the broken revision's ten minutes are
not in the figure.

| trials | fastest | median | slowest | broken revision's timeout |
| --- | --- | --- | --- | --- |
| ${figures.length} | ${s(sorted[0]!)} | ${s(sorted[Math.floor(sorted.length / 2)]!)} | ${s(sorted.at(-1)!)} | 600 s |

${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)} at the end. Reproduce:
\`npm run bench -- latest-revision-wins\` (\`MOORING_BENCH_TRIALS\` trials, 3 by default; it starts
the test control plane with workloads).
`);
