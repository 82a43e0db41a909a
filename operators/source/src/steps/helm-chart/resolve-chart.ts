import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reason } from '@mooring/api';
import { ArtifactTooLargeError, extractTarGz, UnsafeArchiveError } from '@mooring/artifact';
import { RetryableError } from '@mooring/runtime';
import { confined, InvalidChartError, readChartMeta } from '../../helm/chart-package.ts';
import {
  InvalidIndexError,
  NoChartVersionError,
  normaliseIndex,
  selectChartVersion,
} from '../../helm/index-file.ts';
import type { HelmChartRun } from '../../helm-chart-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';
import { need } from '../../source-run.ts';

function chartFailure(run: HelmChartRun, reason: Reason, message: string): never {
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason, message);
}

/**
 * The source's artifact, read from this operator's own storage (every source kind lives in it),
 * its digest checked, extracted into scratch within the limits.
 */
export async function extractSource(run: HelmChartRun): Promise<undefined> {
  const source = need(run.source, 'the source');
  const { storage, deps } = run;
  if (!(await storage.verify({ path: source.artifact.path, digest: source.artifact.digest ?? '' }))) {
    throw new RetryableError(
      Reason.DependencyNotReady,
      `the artifact of ${source.kind} ${source.name} is not in storage (yet); waiting for it to be stored again`,
    );
  }
  run.scratch = await mkdtemp(join(tmpdir(), 'mooring-helmchart-'));
  const dir = join(run.scratch, 'source');
  try {
    await extractTarGz(storage.resolveArtifactPath(source.artifact.path), dir, {
      maxFileBytes: deps.limits.maxFileBytes,
      maxTotalBytes: deps.limits.maxTotalBytes,
    });
  } catch (err) {
    if (err instanceof UnsafeArchiveError || err instanceof ArtifactTooLargeError) {
      chartFailure(
        run,
        Reason.ChartPackageFailed,
        `artifact of ${source.kind} ${source.name}: ${err.message}`,
      );
    }
    throw err;
  }
  run.chart = { name: '', version: '', sourceDir: dir };
  return undefined;
}

/** The revision's suffix for reconcileStrategy Revision: the first 12 hex digits of the source revision's digest. */
export function revisionSuffix(sourceRevision: string): string {
  const hex = sourceRevision.slice(sourceRevision.lastIndexOf(':') + 1);
  return hex.slice(0, 12);
}

/**
 * The chart version to build. From a HelmRepository: the highest version of `spec.chart` in the
 * index within `spec.version`. From a Git or OCI source: the Chart.yaml in the folder
 * `spec.chart`. The revision is the version; with reconcileStrategy Revision a Git/OCI chart's
 * version gets `+<first 12 hex of the source revision>`, so every source revision is a new chart.
 */
export async function resolveChart(run: HelmChartRun): Promise<undefined> {
  const { obj } = run;
  const source = need(run.source, 'the source');
  const sourceDir = need(run.chart?.sourceDir, 'the extracted source');
  if (source.kind === 'HelmRepository') {
    let text: string;
    try {
      text = await readFile(join(sourceDir, 'index.yaml'), 'utf8');
    } catch {
      chartFailure(
        run,
        Reason.ChartPullFailed,
        `the artifact of HelmRepository ${source.name} has no index.yaml`,
      );
    }
    try {
      const { index } = normaliseIndex(text, run.deps.limits.maxIndexBytes);
      const entry = selectChartVersion(index, obj.spec.chart, obj.spec.version);
      run.chart = { name: entry.name, version: entry.version, entry };
      run.revision = entry.version;
    } catch (err) {
      if (err instanceof NoChartVersionError || err instanceof InvalidIndexError) {
        chartFailure(run, Reason.ChartPullFailed, `HelmRepository ${source.name}: ${err.message}`);
      }
      throw err;
    }
    return undefined;
  }
  try {
    const chartDir = confined(sourceDir, obj.spec.chart, 'chart path');
    const meta = await readChartMeta(chartDir, obj.spec.chart);
    run.chart = { name: meta.name, version: meta.version, chartDir, sourceDir };
    run.revision =
      obj.spec.reconcileStrategy === 'Revision'
        ? `${meta.version}+${revisionSuffix(source.artifact.revision)}`
        : meta.version;
  } catch (err) {
    if (err instanceof InvalidChartError) {
      chartFailure(run, Reason.ChartPackageFailed, `${source.kind} ${source.name}: ${err.message}`);
    }
    throw err;
  }
  return undefined;
}
