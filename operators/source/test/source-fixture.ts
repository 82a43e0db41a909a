// Runs the source operator in this test process, watching one namespace, with its own storage
// folder and artifact server on a free loopback port; plus small helpers to read what it did.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Artifact, SOURCE_API_VERSION } from '@mooring/api';
import { fetchArtifact } from '@mooring/artifact';
import type { KubeObject, MooringObject } from '@mooring/runtime';
import {
  requestReconcileAndWait,
  startInProcessOperators,
  testCluster,
  waitForReady as waitForObjectReady,
} from '@mooring/test/harness';
import { sourceOperator } from '../src/source-operator.ts';

export interface RunningSource {
  storageRoot: string;
  stop(): Promise<void>;
}

/** Starts the operator for `namespace`; `t.after(stop)` is the caller's job. */
export async function startSourceOperator(
  namespace: string,
  extraArgs: string[] = [],
): Promise<RunningSource> {
  const storageRoot = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
  const running = await startInProcessOperators([sourceOperator()], namespace, [
    '--storage-path',
    storageRoot,
    '--storage-addr',
    '127.0.0.1:0',
    ...extraArgs,
  ]);
  return {
    storageRoot,
    async stop() {
      await running.stop();
      await rm(storageRoot, { recursive: true, force: true });
    },
  };
}

export interface SourceObject extends MooringObject {
  status?: MooringObject['status'] & { artifact?: Artifact; [key: string]: unknown };
}

/** Creates a source object of `kind` in `namespace`. */
export async function createSource(
  kind: 'GitRepository' | 'OCIRepository' | 'HelmRepository' | 'HelmChart',
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const { client } = await testCluster();
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind,
    metadata: { name, namespace },
    spec,
  } as KubeObject);
}

export async function getSource(kind: string, namespace: string, name: string): Promise<SourceObject> {
  const { client } = await testCluster();
  return client.get<SourceObject>({ apiVersion: SOURCE_API_VERSION, kind, namespace, name });
}

function condition(obj: SourceObject, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/** Waits until Ready is `status` at the current generation and `when` holds; the last status is in the error. */
export function waitForReady(
  kind: string,
  namespace: string,
  name: string,
  status: 'True' | 'False' = 'True',
  when: (obj: SourceObject) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<SourceObject> {
  return waitForObjectReady<SourceObject>(
    { apiVersion: SOURCE_API_VERSION, kind, namespace, name },
    status,
    when,
    timeoutMs,
  );
}

export function conditionOf(obj: SourceObject, type: string) {
  return condition(obj, type);
}

/** Downloads the object's artifact over HTTP as a consumer would, digest verified; returns its folder. */
export async function downloadArtifact(
  artifact: Artifact,
): Promise<{ dir: string; cleanup(): Promise<void> }> {
  return fetchArtifact({ url: artifact.url, digest: artifact.digest ?? '', timeoutMs: 10_000 });
}

/** Sets `requestedAt` and waits until the operator reports it handled. */
export function requestReconcile(kind: string, namespace: string, name: string): Promise<SourceObject> {
  return requestReconcileAndWait<SourceObject>({ apiVersion: SOURCE_API_VERSION, kind, namespace, name });
}

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
