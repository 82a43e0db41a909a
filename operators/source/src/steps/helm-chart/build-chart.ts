import { createHash } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Reason } from '@mooring/api';
import { ArtifactTooLargeError, extractTarGz, UnsafeArchiveError } from '@mooring/artifact';
import { RetryableError, StalledError } from '@mooring/runtime';
import { InvalidChartError, mergeValuesFiles, packageChart } from '../../helm/chart-package.ts';
import { chartDownload } from '../../helm/credentials.ts';
import { HttpStatusError, httpGet, redact } from '../../helm/http-get.ts';
import type { HelmChartRun } from '../../helm-chart-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';
import { need } from '../../source-run.ts';

function fail(run: HelmChartRun, reason: Reason, message: string): never {
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason, message);
}

/** Downloads the chart version's package from the URL the index gives, its digest checked. */
async function pullChart(run: HelmChartRun): Promise<string> {
  const { obj, deps } = run;
  const chart = need(run.chart, 'the chart');
  const entry = need(chart.entry, 'the index entry');
  const repository = need(run.source?.repository, 'the HelmRepository');
  const what = `chart ${chart.name}-${chart.version}`;
  const first = entry.urls[0];
  if (!first) fail(run, Reason.ChartPullFailed, `${what} has no URL in the index`);
  let download: ReturnType<typeof chartDownload>;
  try {
    download = chartDownload(new URL(repository.spec.url), first, repository.spec.passCredentials ?? false);
  } catch (err) {
    fail(run, Reason.ChartPullFailed, `${what}: ${(err as Error).message}`);
  }
  let body: Buffer;
  try {
    body = await httpGet(download.url, {
      auth: download.withCredentials ? run.credentials?.auth : undefined,
      passCredentials: repository.spec.passCredentials ?? false,
      tls: run.credentials?.tls,
      maxBytes: deps.limits.maxChartBytes,
      signal: run.ctx.deadline(run.timeoutMs),
      what,
    });
  } catch (err) {
    const status = err instanceof HttpStatusError ? err.status : 0;
    const auth = status === 401 || status === 403;
    const hint =
      auth && !download.withCredentials
        ? `; the chart is on another host than the repository, so credentials go along only with passCredentials`
        : auth && run.credentials?.secret
          ? `; check the credentials in Secret ${run.credentials.secret}`
          : '';
    fail(
      run,
      auth ? Reason.AuthenticationFailed : Reason.ChartPullFailed,
      `${(err as Error).message}${hint}`,
    );
  }
  const hex = createHash('sha256').update(body).digest('hex');
  const wanted = entry.digest?.replace(/^sha256:/, '').toLowerCase();
  if (wanted && wanted !== hex) {
    const message = `${what} from ${redact(download.url)} has digest sha256:${hex}, the index says sha256:${wanted}`;
    markFetchFailed(run.ctx, Reason.ChartPullFailed, message);
    throw new RetryableError(Reason.ChartPullFailed, message);
  }
  const file = join(need(run.scratch, 'the scratch folder'), `${chart.name}-${chart.version}.tgz`);
  await writeFile(file, body);
  run.made = 'pulled';
  if (!obj.spec.valuesFiles?.length) return file;
  // Values files: the package is unpacked, its values replaced by the merge, and packed again.
  const unpacked = join(need(run.scratch, 'the scratch folder'), 'pulled');
  try {
    await extractTarGz(file, unpacked, {
      maxFileBytes: deps.limits.maxFileBytes,
      maxTotalBytes: deps.limits.maxTotalBytes,
    });
  } catch (err) {
    if (err instanceof UnsafeArchiveError || err instanceof ArtifactTooLargeError) {
      fail(run, Reason.ChartPullFailed, `${what}: ${err.message}`);
    }
    throw err;
  }
  const top = (await readdir(unpacked, { withFileTypes: true })).filter((e) => e.isDirectory());
  if (top.length !== 1) fail(run, Reason.ChartPullFailed, `${what} does not hold exactly one chart folder`);
  const chartDir = join(unpacked, top[0]!.name);
  return await repackage(run, chartDir, chartDir, undefined);
}

/** The chart folder packaged, with its values replaced by the merged values files. */
async function repackage(
  run: HelmChartRun,
  chartDir: string,
  valuesRoot: string,
  version: string | undefined,
): Promise<string> {
  const { obj, deps } = run;
  const chart = need(run.chart, 'the chart');
  const scratch = need(run.scratch, 'the scratch folder');
  let values: string | undefined;
  if (obj.spec.valuesFiles?.length) {
    const merged = await mergeValuesFiles(
      valuesRoot,
      obj.spec.valuesFiles,
      obj.spec.ignoreMissingValuesFiles ?? false,
    );
    values = merged.yaml;
    run.status.observedValuesFiles = merged.merged;
  }
  const out = join(scratch, `${chart.name}-${version ?? chart.version}.packaged.tgz`);
  await packageChart({
    chartDir,
    name: chart.name,
    version,
    values,
    // A chart from a Git/OCI tree has its file:// dependencies vendored; a pulled package has its own.
    sourceRoot: chart.entry ? undefined : valuesRoot,
    work: join(scratch, 'package'),
    outFile: out,
    limits: { maxFileBytes: deps.limits.maxFileBytes, maxTotalBytes: deps.limits.maxChartBytes },
  });
  return out;
}

/**
 * The chart package: pulled from the HelmRepository (its digest checked), or packaged from the
 * folder in the Git/OCI artifact (values files relative to the source's root, Chart.yaml's
 * version carrying the revision's `+<digest>` when there is one).
 */
export async function buildChart(run: HelmChartRun): Promise<undefined> {
  const chart = need(run.chart, 'the chart');
  const revision = need(run.revision, 'the revision');
  try {
    if (chart.entry) {
      run.packageFile = await pullChart(run);
    } else {
      run.packageFile = await repackage(
        run,
        need(chart.chartDir, 'the chart folder'),
        need(chart.sourceDir, 'the source folder'),
        revision,
      );
      run.made = 'packaged';
    }
  } catch (err) {
    if (err instanceof RetryableError || err instanceof StalledError) throw err;
    if (err instanceof InvalidChartError || err instanceof ArtifactTooLargeError) {
      fail(run, Reason.ChartPackageFailed, `chart ${chart.name}: ${err.message}`);
    }
    throw err;
  }
  return undefined;
}
