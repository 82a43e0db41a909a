import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ArtifactStorage, startArtifactServer } from '@mooring/artifact';
import { createGitClient } from '@mooring/git';
import {
  type MooringObject,
  type OperatorDefinition,
  parseListenAddress,
  type Reconciler,
} from '@mooring/runtime';
import { gitRepositoryReconciler } from './git-repository-reconciler.ts';
import { helmChartReconciler } from './helm-chart-reconciler.ts';
import { helmRepositoryReconciler } from './helm-repository-reconciler.ts';
import { ociRepositoryReconciler } from './oci-repository-reconciler.ts';
import { SOURCE_FLAGS, sourceOptions } from './source-flags.ts';
import { PackedLayers } from './steps/oci-repository/packed-layers.ts';

/**
 * Size limits of one artifact. A single file over 100 MiB (Flux's extraction cap) is refused with
 * the file's name; the whole tree may reach 1 GiB.
 */
const ARTIFACT_LIMITS = { maxFileBytes: 100 * 1024 * 1024, maxTotalBytes: 1024 * 1024 * 1024 };

/** Flux's Helm limits: an index of 50 MiB, a chart package of 10 MiB, a file in a chart of 5 MiB. */
const HELM_INDEX_MAX_BYTES = 50 * 1024 * 1024;
const HELM_CHART_LIMITS = {
  maxIndexBytes: HELM_INDEX_MAX_BYTES,
  maxChartBytes: 10 * 1024 * 1024,
  maxFileBytes: 5 * 1024 * 1024,
  maxTotalBytes: ARTIFACT_LIMITS.maxTotalBytes,
};

/**
 * The source operator: GitRepository, OCIRepository, HelmRepository and HelmChart reconcilers sharing one artifact storage,
 * and the read-only HTTP server that hands artifacts to consumers on `--storage-addr`.
 */
export function sourceOperator(): OperatorDefinition {
  let storage: ArtifactStorage | undefined;
  let storageRoot = '';
  let gitBackend: 'cli' | 'isomorphic' = 'cli';
  return {
    name: 'source',
    extraFlags: SOURCE_FLAGS,

    async start(ctx) {
      const opts = sourceOptions(ctx.options);
      storageRoot = resolve(opts.storagePath);
      gitBackend = opts.gitBackend;
      await mkdir(storageRoot, { recursive: true });
      const listen = parseListenAddress(opts.storageAddr);
      const server = await startArtifactServer({
        root: storageRoot,
        host: listen.host ?? '0.0.0.0',
        port: listen.port,
      });
      // In a cluster the install manifests set --storage-adv-addr to the Service; locally the
      // consumers run on this machine, so loopback with the port actually bound is right.
      const advertised = opts.storageAdvAddr ?? `localhost:${server.port}`;
      storage = new ArtifactStorage({
        root: storageRoot,
        advertisedBase: `http://${advertised}`,
        retentionRecords: opts.retentionRecords,
        retentionTtlMs: opts.retentionTtlMs,
      });
      ctx.log.info(
        { storagePath: storageRoot, storageAddr: server.url, advertised, gitBackend },
        'artifact server listening',
      );
      return () => server.close();
    },

    reconcilers(ctx) {
      if (!storage) throw new Error('the source operator must be started before its reconcilers are built');
      const git = createGitClient(gitBackend);
      const reconcilers: Reconciler<MooringObject>[] = [
        gitRepositoryReconciler({
          client: ctx.client,
          storage,
          storageRoot,
          git,
          limits: ARTIFACT_LIMITS,
        }) as never,
        ociRepositoryReconciler({
          client: ctx.client,
          storage,
          limits: ARTIFACT_LIMITS,
          packedLayers: new PackedLayers(),
        }) as never,
        helmRepositoryReconciler({
          client: ctx.client,
          storage,
          maxIndexBytes: HELM_INDEX_MAX_BYTES,
        }) as never,
        helmChartReconciler({ client: ctx.client, storage, limits: HELM_CHART_LIMITS }) as never,
      ];
      return reconcilers;
    },
  };
}
