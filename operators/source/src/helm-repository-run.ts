import type { HelmRepository } from '@mooring/api';
import type { ArtifactStorage } from '@mooring/artifact';
import type { KubeClient } from '@mooring/runtime';
import type { HelmCredentials } from './helm/credentials.ts';
import type { NormalisedIndex } from './helm/index-file.ts';
import type { SourceRun } from './source-run.ts';

export interface HelmRepositoryDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  /** Largest index.yaml accepted (Flux's --helm-index-max-size). */
  maxIndexBytes: number;
}

/**
 * One reconcile of one HelmRepository: what the steps in ./steps/helm-repository read and what
 * each adds for the next.
 */
export interface HelmRepositoryRun extends SourceRun<NonNullable<HelmRepository['status']>> {
  readonly obj: HelmRepository;
  readonly deps: HelmRepositoryDeps;
  /** `spec.url`, parsed. */
  url?: URL;
  credentials?: HelmCredentials;
  /** The index fetched, checked and normalised. */
  index?: NormalisedIndex;
}
