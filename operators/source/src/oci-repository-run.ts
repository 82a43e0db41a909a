import type { OCIRepository } from '@mooring/api';
import type { ArtifactStorage } from '@mooring/artifact';
import type { OciDescriptor, OciReference, RegistryClient, ResolvedManifest } from '@mooring/oci';
import type { KubeClient } from '@mooring/runtime';
import type { SourceRun } from './source-run.ts';
import type { PackedLayers } from './steps/oci-repository/packed-layers.ts';

export interface OciRepositoryDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  limits: { maxFileBytes: number; maxTotalBytes: number };
  /** Artifacts already built from a layer, copied instead of pulled and packed again; none when absent. */
  packedLayers?: PackedLayers;
}

/** The manifest `spec.ref` resolved to. */
export interface ResolvedOciRef {
  /** What the user asked for, shown in the revision: the tag, or nothing when pulled by digest. */
  tag: string | undefined;
  digest: string;
  manifest: ResolvedManifest;
}

/**
 * One reconcile of one OCIRepository: what the steps in ./steps/oci-repository read and what
 * each adds for the next.
 */
export interface OciRepositoryRun extends SourceRun<NonNullable<OCIRepository['status']>> {
  readonly obj: OCIRepository;
  readonly deps: OciRepositoryDeps;
  /** `spec.url`, parsed. */
  target?: OciReference;
  /** A client for the registry with the object's credentials and CA, and its deadline. */
  registry?: RegistryClient;
  resolved?: ResolvedOciRef;
  /** The layer `spec.layerSelector` picks. */
  layer?: OciDescriptor;
  /** The layer's blob, downloaded into scratch. */
  blob?: string;
}
