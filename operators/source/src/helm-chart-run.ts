import type { Artifact, HelmChart, HelmRepository } from '@mooring/api';
import type { ArtifactStorage } from '@mooring/artifact';
import type { KubeClient } from '@mooring/runtime';
import type { HelmCredentials } from './helm/credentials.ts';
import type { ChartVersionEntry } from './helm/index-file.ts';
import type { SourceRun } from './source-run.ts';

export interface HelmChartDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  limits: {
    /** Largest chart package (Flux's --helm-chart-max-size). */
    maxChartBytes: number;
    /** Largest index read back from a HelmRepository's artifact. */
    maxIndexBytes: number;
    maxFileBytes: number;
    maxTotalBytes: number;
  };
}

/** The source `spec.sourceRef` names, with the artifact the chart is taken from. */
export interface ResolvedChartSource {
  kind: HelmChart['spec']['sourceRef']['kind'];
  name: string;
  artifact: Artifact;
  /** The HelmRepository itself, for its URL and credentials. */
  repository?: HelmRepository;
}

/** The chart version a reconcile builds. */
export interface ResolvedChart {
  name: string;
  /** The version in Chart.yaml or the index. */
  version: string;
  /** HelmRepository: the index entry. */
  entry?: ChartVersionEntry;
  /** Git/OCI: the chart's folder in the extracted source artifact. */
  chartDir?: string;
  /** Git/OCI: the extracted source artifact (values files are relative to it). */
  sourceDir?: string;
}

/**
 * One reconcile of one HelmChart: what the steps in ./steps/helm-chart read and what each adds for
 * the next. `revision` is the chart version (with `+<source digest>` for reconcileStrategy Revision).
 */
export interface HelmChartRun extends SourceRun<NonNullable<HelmChart['status']>> {
  readonly obj: HelmChart;
  readonly deps: HelmChartDeps;
  source?: ResolvedChartSource;
  credentials?: HelmCredentials;
  chart?: ResolvedChart;
  /** The chart package, in scratch, ready to store. */
  packageFile?: string;
  /** How the package was made, for the NewArtifact event. */
  made?: 'pulled' | 'packaged';
}
