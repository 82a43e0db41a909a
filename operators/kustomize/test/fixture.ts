// The source and kustomize operators in this test process, watching one namespace, fed by a real
// Git smart-HTTP server; helpers to commit manifests and wait on Kustomizations.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject, MooringObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  GitServer,
  startInProcessOperators,
  type TestRepo,
  testCluster,
  uniqueName,
  waitForReady,
} from '@mooring/test/harness';
import { kustomizeOperator } from '../src/kustomize-operator.ts';

export interface Stack {
  namespace: string;
  git: GitServer;
  /** The source operator's artifact storage folder. */
  storage: string;
  stop(): Promise<void>;
}

/** A namespace, a Git server, and both operators watching that namespace. */
export async function startStack(prefix: string, args: string[] = []): Promise<Stack> {
  const { client } = await testCluster();
  const namespace = uniqueName(prefix);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const git = await GitServer.start();
  const storage = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
  const operators = await startInProcessOperators([sourceOperator(), kustomizeOperator()], namespace, [
    '--storage-path',
    storage,
    '--storage-addr',
    '127.0.0.1:0',
    '--requeue-dependency',
    '2s',
    ...args,
  ]);
  return {
    namespace,
    git,
    storage,
    async stop() {
      await operators.stop();
      await git.close();
      // Retried: a write the stopping operators still finish can race the removal (ENOTEMPTY).
      await rm(storage, { recursive: true, force: true, maxRetries: 5 });
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
    },
  };
}

export interface KustomizationObject extends MooringObject {
  status?: MooringObject['status'] & {
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    inventory?: { entries: { id: string; v: string }[] };
    history?: { digest: string; totalReconciliations: number; lastReconciledStatus: string }[];
  };
}

/** A repository with `files` committed on main and a GitRepository named after it pointing there. */
export async function gitSource(
  stack: Stack,
  files: Record<string, string>,
): Promise<{ repo: TestRepo; name: string }> {
  const name = uniqueName('repo');
  const repo = await stack.git.createRepo(name);
  await repo.commit(files);
  const { client } = await testCluster();
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name, namespace: stack.namespace },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  return { repo, name };
}

export async function createKustomization(
  stack: Stack,
  name: string,
  spec: Record<string, unknown>,
  namespace = stack.namespace,
): Promise<void> {
  const { client } = await testCluster();
  await client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace },
    spec: { interval: '10m', prune: true, ...spec },
  } as KubeObject);
}

export async function getKustomization(namespace: string, name: string): Promise<KustomizationObject> {
  const { client } = await testCluster();
  return client.get<KustomizationObject>({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    namespace,
    name,
  });
}

export function condition(obj: KustomizationObject, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/** Waits for Ready=`status` at the current generation and `when`, reporting the last status on timeout. */
export function waitForKustomization(
  namespace: string,
  name: string,
  status: 'True' | 'False' = 'True',
  when: (obj: KustomizationObject) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<KustomizationObject> {
  return waitForReady<KustomizationObject>(
    { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace, name },
    status,
    when,
    timeoutMs,
  );
}

/** Sets `requestedAt` on an object of the two Mooring kinds used here. */
export async function requestReconcile(
  kind: 'Kustomization' | 'GitRepository',
  namespace: string,
  name: string,
) {
  const { client } = await testCluster();
  await client.mergePatch(
    {
      apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : SOURCE_API_VERSION,
      kind,
      namespace,
      name,
    },
    { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}-${Math.random()}` } } },
  );
}

export async function getObject(
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  name: string,
) {
  const { client } = await testCluster();
  return client.getOrUndefined<KubeObject & Record<string, unknown>>({ apiVersion, kind, namespace, name });
}

export const configMap = (name: string, data: Record<string, string>, extra = '') =>
  `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
${extra}data:
${Object.entries(data)
  .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
  .join('\n')}
`;
