import { type Artifact, type Kustomization, kindApiVersion, Reason, SOURCE_KINDS } from '@mooring/api';
import {
  ApiError,
  type KubeClient,
  type KubeObject,
  type ObjectCache,
  RetryableError,
  StalledError,
  WaitingError,
} from '@mooring/runtime';

export interface ResolvedSource {
  kind: string;
  namespace: string;
  name: string;
  artifact: Artifact;
}

/** What reads a source: a Kustomization, or the chart reference of a HelmRelease. */
export interface SourceReader {
  metadata: Kustomization['metadata'];
  spec: Pick<Kustomization['spec'], 'sourceRef'>;
}

/** The `sourceRef` as a full key, in the Kustomization's namespace unless it names another. */
export function sourceKey(obj: SourceReader): { kind: string; namespace: string; name: string } {
  const ref = obj.spec.sourceRef;
  return { kind: ref.kind, namespace: ref.namespace ?? obj.metadata.namespace ?? 'default', name: ref.name };
}

/**
 * Finds the source and its artifact, in the operator's informer cache when it holds the source's
 * kind and namespace (the watch that enqueued this reconcile put the new artifact there), else
 * with a GET. Another namespace with `--no-cross-namespace-refs` is a
 * terminal AccessDenied; a missing source is retried; a source without an artifact yet is waited
 * for at the dependency interval, so a fresh install converges without an error storm.
 */
export async function resolveSource(
  client: KubeClient,
  obj: SourceReader,
  opts: { noCrossNamespaceRefs: boolean; requeueDependencyMs: number; cache?: ObjectCache },
): Promise<ResolvedSource> {
  const key = sourceKey(obj);
  if (opts.noCrossNamespaceRefs && key.namespace !== obj.metadata.namespace) {
    throw new StalledError(
      Reason.AccessDenied,
      `cannot use ${key.kind} ${key.namespace}/${key.name}: references to other namespaces are not allowed (--no-cross-namespace-refs)`,
    );
  }
  type Source = KubeObject & {
    status?: { artifact?: Artifact; conditions?: { type: string; status: string; message?: string }[] };
  };
  // The CRD admits only source kinds; an object written before a kind was removed still gets a clear line.
  const sourceKind = SOURCE_KINDS.find((k) => k === key.kind);
  if (!sourceKind) {
    throw new StalledError(
      Reason.InvalidSpec,
      `${key.kind} is not a source kind: use one of ${SOURCE_KINDS.join(', ')}`,
    );
  }
  const notFound = () =>
    new RetryableError(Reason.ArtifactFailed, `${key.kind} ${key.namespace}/${key.name} not found`);
  let source: Source;
  if (opts.cache?.covers(key.kind, key.namespace)) {
    const cached = opts.cache.get(key.kind, key.namespace, key.name) as Source | undefined;
    if (!cached) throw notFound();
    source = cached;
  } else {
    try {
      source = await client.get<Source>({
        // Each source kind at its own group's version, from the one kind registry.
        apiVersion: kindApiVersion(sourceKind),
        kind: key.kind,
        namespace: key.namespace,
        name: key.name,
      });
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) throw notFound();
      throw err;
    }
  }
  const artifact = source.status?.artifact;
  if (!artifact) {
    // Why it has none is on the source; saying it here saves the user a second lookup.
    const ready = source.status?.conditions?.find((c) => c.type === 'Ready');
    const why = ready?.status === 'False' && ready.message ? `: ${ready.message}` : '';
    throw new WaitingError(
      Reason.ArtifactFailed,
      `${key.kind} ${key.namespace}/${key.name} has no artifact yet${why}`,
      opts.requeueDependencyMs,
    );
  }
  return { ...key, artifact };
}
