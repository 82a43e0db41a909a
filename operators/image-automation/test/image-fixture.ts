// Runs the image-automation operator in this test process, watching one namespace, with its own
// tag storage; plus helpers to push image tags to a registry and read what the operator did.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { MediaTypes, type OciReference, RegistryClient, type RegistryCredentials } from '@mooring/oci';
import type { KubeObject, MooringObject, OperatorDefinition } from '@mooring/runtime';
import {
  requestReconcileAndWait,
  startInProcessOperators,
  testCluster,
  waitForReady as waitForObjectReady,
} from '@mooring/test/harness';
import { imageAutomationOperator } from '../src/image-automation-operator.ts';

export interface RunningOperator {
  storageRoot: string;
  /** Stops the operator; the storage stays until `cleanup`. */
  stop(): Promise<void>;
  cleanup(): Promise<void>;
}

/** Starts the operator (or `definitions`) for `namespace` on `storageRoot` (a new temp dir by default). */
export async function startImageOperator(
  namespace: string,
  opts: { storageRoot?: string; definitions?: OperatorDefinition[]; args?: string[] } = {},
): Promise<RunningOperator> {
  const storageRoot = opts.storageRoot ?? (await mkdtemp(join(tmpdir(), 'mooring-image-storage-')));
  const running = await startInProcessOperators(opts.definitions ?? [imageAutomationOperator()], namespace, [
    '--storage-path',
    storageRoot,
    ...(opts.args ?? []),
  ]);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.stop();
  };
  return {
    storageRoot,
    stop,
    async cleanup() {
      await stop();
      await rm(storageRoot, { recursive: true, force: true });
    },
  };
}

/** Pushes one small image per tag; each tag gets distinct content, so a distinct digest. */
export async function pushTags(
  host: string,
  repository: string,
  tags: readonly string[],
  credentials?: RegistryCredentials,
): Promise<Record<string, string>> {
  const client = new RegistryClient({
    insecure: true,
    timeoutMs: 10_000,
    ...(credentials ? { credentials } : {}),
  });
  const ref: OciReference = { host, repository };
  const digests: Record<string, string> = {};
  for (const tag of tags) {
    const { digest } = await client.push(ref, tag, {
      config: { mediaType: MediaTypes.fluxConfig, data: Buffer.from('{}') },
      layers: [{ mediaType: MediaTypes.fluxContent, data: Buffer.from(`image ${repository}:${tag}`) }],
    });
    digests[tag] = digest;
  }
  return digests;
}

export interface ImageObject extends MooringObject {
  spec: Record<string, unknown>;
  status?: MooringObject['status'] & Record<string, unknown>;
}

/** Creates an image.mooring.dev object. */
export async function createImageObject(
  kind: 'ImageRepository' | 'ImagePolicy' | 'ImageUpdateAutomation',
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  labels?: Record<string, string>,
): Promise<void> {
  const { client } = await testCluster();
  await client.create({
    apiVersion: IMAGE_API_VERSION,
    kind,
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec,
  } as KubeObject);
}

/** Creates a GitRepository (the automation reads its URL and credentials; no source operator runs). */
export async function createGitRepository(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const { client } = await testCluster();
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name, namespace },
    spec: { interval: '10m', ...spec },
  } as KubeObject);
}

/** Creates a Secret with string values. */
export async function createSecret(
  namespace: string,
  name: string,
  data: Record<string, string>,
  type = 'Opaque',
): Promise<void> {
  const { client } = await testCluster();
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  } as KubeObject);
}

/** A `.dockerconfigjson` value for one registry. */
export function dockerConfig(host: string, username: string, password: string): string {
  return JSON.stringify({
    auths: { [host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } },
  });
}

export async function getImageObject(kind: string, namespace: string, name: string): Promise<ImageObject> {
  const { client } = await testCluster();
  return client.get<ImageObject>({ apiVersion: IMAGE_API_VERSION, kind, namespace, name });
}

export function conditionOf(obj: ImageObject, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/** Waits until Ready is `status` at the current generation and `when` holds; the last status is in the error. */
export function waitForReady(
  kind: string,
  namespace: string,
  name: string,
  status: 'True' | 'False' = 'True',
  when: (obj: ImageObject) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<ImageObject> {
  return waitForObjectReady<ImageObject>(
    { apiVersion: IMAGE_API_VERSION, kind, namespace, name },
    status,
    when,
    timeoutMs,
  );
}

/** Sets `requestedAt` and waits until the operator reports it handled. */
export function requestReconcile(kind: string, namespace: string, name: string): Promise<ImageObject> {
  return requestReconcileAndWait<ImageObject>({ apiVersion: IMAGE_API_VERSION, kind, namespace, name });
}

/** Kubernetes Events recorded for an object, as `reason: message`. */
export async function eventsOf(namespace: string, name: string): Promise<string[]> {
  const { client } = await testCluster();
  const list = await client.list<
    KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }
  >('v1', 'Event', { namespace });
  return list.items.filter((e) => e.involvedObject?.name === name).map((e) => `${e.reason}: ${e.message}`);
}
