// A hook's object as Helm creates it, and the few calls the hook runner makes on it, each as the
// identity of the HelmRelease or Kustomization that owns the hook: KubeClient's create and
// getOrUndefined send no impersonation, so these go through its raw request with the same paths.
import {
  ApiError,
  FIELD_MANAGER,
  type Impersonation,
  type KubeClient,
  type KubeObject,
  resourcePath,
} from '@mooring/runtime';
import { parseAllDocuments } from 'yaml';

/** Where a hook's object lives, and how to name it in a message. */
export interface HookObject {
  object: KubeObject;
  /** The API path of its collection (POST) and, with the name, of the object itself. */
  collectionPath: string;
  objectPath: string;
  /** `Job/ns/name`, for messages. */
  describe: string;
}

export interface ObjectCallOptions {
  client: KubeClient;
  impersonate?: Impersonation;
  signal: AbortSignal;
}

/** The hook's manifest cannot become one object (bad YAML, no kind or name, unknown kind). */
export class HookBuildError extends Error {
  override name = 'HookBuildError';
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(asRecord(value) ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Where the hook's object goes: its namespace when it names none, and what is added to it. */
export interface HookPlacement {
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * The object a hook's manifest declares, with the release's labels and annotations added and a
 * namespaced object put in `namespace` unless it names its own (Helm's builder default).
 */
export async function hookObject(
  manifest: string,
  path: string,
  client: KubeClient,
  extra: HookPlacement,
): Promise<HookObject> {
  // YAML 1.1, as Helm's builder reads a manifest (sigs.k8s.io/yaml on go-yaml v2): `yes` is a boolean.
  const docs = parseAllDocuments(manifest, { version: '1.1' }).filter((d) => d.contents !== null);
  if (docs.length !== 1) throw new HookBuildError(`${path} holds ${docs.length} objects, a hook must be one`);
  const doc = docs[0]!;
  if (doc.errors.length) throw new HookBuildError(`${path} is not valid YAML: ${doc.errors[0]?.message}`);
  return hookObjectFrom(doc.toJS({ maxAliasCount: 100 }), path, client, extra);
}

/** The same for an object already parsed (a Kustomization's rendered hook); `path` names it in errors. */
export async function hookObjectFrom(
  value: unknown,
  path: string,
  client: KubeClient,
  extra: HookPlacement,
): Promise<HookObject> {
  const raw = asRecord(value);
  const meta = asRecord(raw?.metadata);
  if (!raw || typeof raw.apiVersion !== 'string' || typeof raw.kind !== 'string' || !meta)
    throw new HookBuildError(`${path} has no apiVersion, kind or metadata`);
  if (typeof meta.name !== 'string' || meta.name === '')
    throw new HookBuildError(`${path} has no metadata.name (hooks cannot use generateName)`);
  let mapping: Awaited<ReturnType<KubeClient['mapper']['map']>>;
  try {
    mapping = await client.mapper.map(raw.apiVersion, raw.kind);
  } catch (err) {
    throw new HookBuildError(`${path}: ${(err as Error).message}`);
  }
  const namespace = mapping.namespaced
    ? typeof meta.namespace === 'string' && meta.namespace !== ''
      ? meta.namespace
      : extra.namespace
    : undefined;
  const metadata: KubeObject['metadata'] = {
    ...meta,
    name: meta.name,
    labels: { ...stringMap(meta.labels), ...extra.labels },
    annotations: { ...stringMap(meta.annotations), ...extra.annotations },
  };
  if (namespace) metadata.namespace = namespace;
  else delete metadata.namespace;
  const object = { ...raw, apiVersion: raw.apiVersion, kind: raw.kind, metadata } as KubeObject;
  return {
    object,
    collectionPath: resourcePath(mapping, namespace),
    objectPath: resourcePath(mapping, namespace, meta.name),
    describe: `${raw.kind}/${namespace ? `${namespace}/` : ''}${meta.name}`,
  };
}

/** The API server's own sentence for a failed call (an RBAC refusal names the user and the verb). */
export function apiMessage(err: unknown): string {
  if (err instanceof ApiError) return err.status?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Creates the object, as Helm does (not apply): an object left in the way is an error. */
export async function createObject(hook: HookObject, opts: ObjectCallOptions): Promise<void> {
  await opts.client.request({
    method: 'POST',
    path: hook.collectionPath,
    query: { fieldManager: FIELD_MANAGER },
    body: hook.object,
    impersonate: opts.impersonate,
    signal: opts.signal,
  });
}

/** The live object, or undefined once it is gone. */
export async function readObject(hook: HookObject, opts: ObjectCallOptions): Promise<KubeObject | undefined> {
  try {
    return await opts.client.request<KubeObject>({
      method: 'GET',
      path: hook.objectPath,
      impersonate: opts.impersonate,
      signal: opts.signal,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) return undefined;
    throw err;
  }
}

/** Deletes with background propagation, as Helm's client does; a missing object is not an error. */
export async function deleteObject(hook: HookObject, opts: ObjectCallOptions): Promise<void> {
  try {
    await opts.client.request({
      method: 'DELETE',
      path: hook.objectPath,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
      impersonate: opts.impersonate,
      signal: opts.signal,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) return;
    throw err;
  }
}
