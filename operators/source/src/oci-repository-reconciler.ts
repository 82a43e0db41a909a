import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Artifact,
  ConditionType,
  FINALIZER,
  type OCIRepository,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  type ArtifactStorage,
  ArtifactTooLargeError,
  extractTarGz,
  UnsafeArchiveError,
} from '@mooring/artifact';
import {
  credentialsFromDockerConfig,
  type OciReference,
  parseOciUrl,
  pickSemverTag,
  RegistryAuthError,
  RegistryClient,
  type RegistryCredentials,
} from '@mooring/oci';
import {
  type KubeClient,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  readSecretData,
  removeCondition,
  StalledError,
} from '@mooring/runtime';
import { loadExclusionFilter } from './ignore-rules.ts';
import { markArtifactCurrent, markFetchFailed, markNewRevision } from './source-conditions.ts';
import { keepArtifact, verifiedArtifact } from './stored-artifact.ts';
import { deadlineSignal, specTimeoutMs } from './timeouts.ts';

export interface OciRepositoryDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  limits: { maxFileBytes: number; maxTotalBytes: number };
}

type Manifest = Awaited<ReturnType<RegistryClient['resolveManifest']>>;

interface Resolved {
  /** What the user asked for, shown in the revision: the tag, or nothing when pulled by digest. */
  tag: string | undefined;
  digest: string;
  revision: string;
  manifest: Manifest;
}

function pullFailure(ctx: ReconcileContext, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const message = (err as Error).message;
  const reason =
    err instanceof RegistryAuthError ? Reason.AuthenticationFailed : Reason.OCIArtifactPullFailed;
  markFetchFailed(ctx, reason, message);
  throw new RetryableError(reason, message);
}

/**
 * OCIRepository: resolve the ref to a manifest digest (one registry call for a tag or digest);
 * when the artifact already holds that manifest, stop there. Otherwise pull the selected layer,
 * verifying its digest as it streams, and store it extracted-and-filtered or copied as-is.
 */
export function ociRepositoryReconciler(deps: OciRepositoryDeps): Reconciler<OCIRepository> {
  const refOfObject = (obj: OCIRepository) => ({
    kind: 'OCIRepository',
    namespace: obj.metadata.namespace ?? 'default',
    name: obj.metadata.name ?? '',
  });

  async function registryOptions(obj: OCIRepository, target: OciReference) {
    const namespace = obj.metadata.namespace ?? 'default';
    let credentials: RegistryCredentials | undefined;
    if (obj.spec.secretRef?.name) {
      const data = await readSecretData(
        deps.client,
        namespace,
        obj.spec.secretRef.name,
        'registry credentials',
      );
      const config = data['.dockerconfigjson'];
      if (config === undefined) {
        throw new StalledError(
          Reason.InvalidProviderConfiguration,
          `Secret ${obj.spec.secretRef.name} has no '.dockerconfigjson' key`,
        );
      }
      try {
        credentials = credentialsFromDockerConfig(config, target.host);
      } catch (err) {
        throw new StalledError(
          Reason.InvalidProviderConfiguration,
          `Secret ${obj.spec.secretRef.name}: ${(err as Error).message}`,
        );
      }
    }
    let caCert: string | undefined;
    if (obj.spec.certSecretRef?.name) {
      const data = await readSecretData(deps.client, namespace, obj.spec.certSecretRef.name, 'TLS');
      caCert = data['ca.crt'];
    }
    return { credentials, caCert, insecure: obj.spec.insecure ?? false };
  }

  async function resolve(
    obj: OCIRepository,
    registry: RegistryClient,
    target: OciReference,
  ): Promise<Resolved> {
    const ref = obj.spec.ref ?? {};
    if (ref.digest) {
      const manifest = await registry.resolveManifest(target, ref.digest);
      return { tag: undefined, digest: manifest.digest, revision: manifest.digest, manifest };
    }
    let tag = ref.tag || 'latest';
    if (ref.semver) {
      let filter: RegExp | undefined;
      try {
        filter = ref.semverFilter ? new RegExp(ref.semverFilter) : undefined;
      } catch {
        throw new StalledError(
          'InvalidSemverFilter',
          `ref.semverFilter '${ref.semverFilter}' is not a valid regular expression`,
        );
      }
      const tags = await registry.listTags(target);
      const picked = pickSemverTag(tags, ref.semver, filter);
      if (!picked) {
        throw new RetryableError(
          Reason.OCIArtifactPullFailed,
          `no tag of ${target.host}/${target.repository} matches semver range '${ref.semver}'`,
        );
      }
      tag = picked;
    }
    const manifest = await registry.resolveManifest(target, tag);
    return { tag, digest: manifest.digest, revision: `${tag}@${manifest.digest}`, manifest };
  }

  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'OCIRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 60_000,

    async reconcile(obj, ctx): Promise<ReconcileResult> {
      const status = ctx.status as NonNullable<OCIRepository['status']>;
      if (obj.spec.provider && obj.spec.provider !== 'generic') {
        throw new StalledError(
          Reason.InvalidProviderConfiguration,
          `provider '${obj.spec.provider}' is not supported yet; use a dockerconfigjson secretRef`,
        );
      }
      if (obj.spec.verify) {
        throw new StalledError(
          Reason.VerificationError,
          'OCI signature verification (cosign, notation) is not supported yet',
        );
      }
      let target: OciReference;
      try {
        target = parseOciUrl(obj.spec.url);
      } catch (err) {
        throw new StalledError(Reason.URLInvalid, (err as Error).message);
      }
      status.artifact = await verifiedArtifact(deps.storage, status.artifact, ctx);

      const timeoutMs = specTimeoutMs(obj.spec.timeout);
      const registry = new RegistryClient({
        ...(await registryOptions(obj, target)),
        timeoutMs,
        signal: deadlineSignal(timeoutMs, ctx.signal),
        userAgent: 'mooring-source',
      });
      let resolved: Resolved;
      try {
        resolved = await resolve(obj, registry, target);
      } catch (err) {
        pullFailure(ctx, err);
      }

      const layerSelector = obj.spec.layerSelector;
      const current = status.artifact;
      const sameInputs =
        JSON.stringify(status.observedLayerSelector ?? null) === JSON.stringify(layerSelector ?? null) &&
        (status.observedIgnore ?? null) === (obj.spec.ignore ?? null);
      if (current && current.revision === resolved.revision && sameInputs) {
        const kept = keepArtifact(deps.storage, current, ctx);
        status.artifact = kept.artifact;
        status.url = kept.artifact.url;
        return kept.result;
      }

      markNewRevision(ctx, current?.revision, resolved.revision);
      const scratch = await mkdtemp(join(tmpdir(), 'mooring-oci-'));
      let artifact: Artifact;
      try {
        const pulled = resolved.manifest;
        const layers = pulled.manifest.layers;
        const layer = layerSelector?.mediaType
          ? layers.find((l) => l.mediaType === layerSelector.mediaType)
          : layers[0];
        if (!layer) {
          const message = layerSelector?.mediaType
            ? `no layer with media type '${layerSelector.mediaType}' in ${resolved.revision}`
            : `the manifest of ${resolved.revision} has no layers`;
          markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, message);
          throw new StalledError(Reason.OCIArtifactLayerOperationFailed, message);
        }
        if (layer.size > deps.limits.maxTotalBytes) {
          const message = `layer ${layer.digest} is ${layer.size} bytes, over the ${deps.limits.maxTotalBytes}-byte limit`;
          markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, message);
          throw new RetryableError(Reason.OCIArtifactLayerOperationFailed, message);
        }
        const blob = join(scratch, 'layer.tar.gz');
        try {
          await registry.fetchBlob(target, layer, blob, { maxBytes: deps.limits.maxTotalBytes });
        } catch (err) {
          pullFailure(ctx, err);
        }
        const ref = refOfObject(obj);
        let stored: Awaited<ReturnType<ArtifactStorage['archive']>>;
        if (layerSelector?.operation === 'copy') {
          stored = await deps.storage.storeFile(ref, blob);
        } else {
          const tree = join(scratch, 'tree');
          try {
            await extractTarGz(blob, tree, {
              maxTotalBytes: deps.limits.maxTotalBytes,
              maxFileBytes: deps.limits.maxFileBytes,
            });
            const filter = await loadExclusionFilter(tree, obj.spec.ignore);
            stored = await deps.storage.archive(ref, tree, { filter, ...deps.limits });
          } catch (err) {
            if (err instanceof UnsafeArchiveError || err instanceof ArtifactTooLargeError) {
              markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, err.message);
              throw new RetryableError(Reason.OCIArtifactLayerOperationFailed, err.message);
            }
            throw err;
          }
        }
        artifact = {
          ...stored,
          revision: resolved.revision,
          ...(Object.keys(pulled.annotations).length ? { metadata: pulled.annotations } : {}),
        };
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }

      status.artifact = artifact;
      status.url = artifact.url;
      status.observedIgnore = obj.spec.ignore;
      status.observedLayerSelector = layerSelector;
      ctx.status.conditions = removeCondition(ctx.status.conditions, ConditionType.StorageOperationFailed);
      markArtifactCurrent(ctx, artifact.revision);
      ctx.event(
        'info',
        'NewArtifact',
        `stored artifact with revision '${artifact.revision}' from '${obj.spec.url}'`,
        {
          revision: artifact.revision,
          digest: artifact.digest ?? '',
        },
      );
      await deps.storage.gc(refOfObject(obj), artifact);
      return { message: `stored artifact for revision '${artifact.revision}'`, revision: artifact.revision };
    },

    async finalize(obj) {
      await deps.storage.remove(refOfObject(obj));
    },
  };
}
