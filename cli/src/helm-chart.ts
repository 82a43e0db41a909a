// `mooring build helmchart`: a local chart (a directory or a packaged .tgz) rendered offline by
// @mooring/helm's renderChart, Helm v3.22.0's own engine in WebAssembly, so the output is the bytes
// `helm template` prints.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { REPO_ROOT } from './cli-paths.ts';

export interface HelmChartFlags {
  name?: string;
  namespace?: string;
  values?: string[];
  set?: string[];
  setString?: string[];
  setJson?: string[];
  kubeVersion?: string;
  apiVersions?: string[];
  includeCrds?: boolean;
  skipTests?: boolean;
  version?: string;
}

/** The release name `helm template` uses when none is given. */
export const DEFAULT_RELEASE_NAME = 'release-name';

// Generous: a render is bounded by the chart, not by a reconcile loop, and a busy machine is slow
// to compile the 80 MB module.
const LIMITS = { timeoutMs: 10 * 60_000, memoryBytes: 1 << 30 };

/** `repo/chart` or `oci://…`: a chart from a HelmRepository, which only the cluster can fetch. */
function isRemoteReference(ref: string): boolean {
  return /^oci:\/\//.test(ref) || /^[A-Za-z0-9][\w-]*\/[A-Za-z0-9][\w.-]*$/.test(ref);
}

/** The Git work tree `dir` is in (the nearest folder up with a `.git`), else `dir` itself. */
function workTreeOf(dir: string): string {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return dir;
  }
}

function readValuesFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read values file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      EXIT_ERROR,
    );
  }
}

/** The chart folder inside an extracted package: its one top-level folder, as Helm's loader reads it. */
function packagedChartDir(extracted: string, shown: string): string {
  const entries = readdirSync(extracted, { withFileTypes: true });
  const dirs = entries.filter((e) => e.isDirectory());
  if (dirs.length !== 1 || entries.length !== 1)
    throw new CliError(
      `${shown} is not a packaged chart: it should hold one folder with the chart, it holds ${entries.map((e) => e.name).join(', ') || 'nothing'}.`,
    );
  const dir = join(extracted, dirs[0]!.name);
  if (!existsSync(join(dir, 'Chart.yaml')))
    throw new CliError(`${shown} is not a packaged chart: ${dirs[0]!.name}/Chart.yaml is missing.`);
  return dir;
}

/** The `version` of the chart's Chart.yaml, as text. */
async function chartVersion(dir: string): Promise<string | undefined> {
  const { parse } = await import('yaml');
  const chart = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as { version?: unknown } | null;
  return chart?.version === undefined || chart.version === null ? undefined : String(chart.version);
}

/** Renders the chart at `ref` (a directory or a .tgz) as `helm template` does, and returns its output. */
export async function renderHelmChart(ref: string, flags: HelmChartFlags): Promise<string> {
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(ref);
  } catch {
    // reported below
  }
  if (!st) {
    if (isRemoteReference(ref))
      throw new CliError(
        `${ref} is not a local chart: a chart from a HelmRepository (repo/chart, oci://) is not fetched by build helmchart, which renders offline; pass a chart directory or a packaged .tgz (e.g. from 'helm pull ${ref}').`,
        EXIT_ERROR,
      );
    throw new CliError(`${ref} does not exist: pass a chart directory or a packaged .tgz.`, EXIT_ERROR);
  }
  if (st.isDirectory() && flags.version !== undefined)
    throw new CliError(
      `--version ${flags.version} applies to a packaged chart (.tgz); ${ref} is a directory, rendered as it is.`,
      EXIT_ERROR,
    );
  // Read before any work, so a missing file is reported as itself.
  const values = (flags.values ?? []).map(readValuesFile);
  const work = st.isDirectory() ? undefined : mkdtempSync(join(tmpdir(), 'mooring-helmchart-'));
  try {
    let chartDir = ref;
    if (work) {
      const { extractTarGz } = await import('@mooring/artifact');
      const extracted = join(work, 'package');
      try {
        await extractTarGz(ref, extracted);
      } catch (err) {
        throw new CliError(`${ref} is not a packaged chart (.tgz): ${(err as Error).message}.`);
      }
      chartDir = packagedChartDir(extracted, ref);
      if (flags.version !== undefined) {
        const version = await chartVersion(chartDir);
        if (version !== flags.version)
          throw new CliError(
            `${ref} holds chart version ${version ?? '(none)'}, not --version ${flags.version}.`,
          );
      }
    }
    const { HelmRenderError, HelmTemplateError, renderChart } = await import('@mooring/helm');
    try {
      return await renderChart({
        chartDir,
        // A directory's links may lead anywhere in its Git work tree, as a source's may in its checkout.
        ...(work ? {} : { linksWithin: workTreeOf(chartDir) }),
        releaseName: flags.name ?? DEFAULT_RELEASE_NAME,
        namespace: flags.namespace ?? 'default',
        values,
        set: flags.set ?? [],
        setString: flags.setString ?? [],
        setJSON: flags.setJson ?? [],
        kubeVersion: flags.kubeVersion,
        apiVersions: flags.apiVersions ?? [],
        includeCrds: flags.includeCrds ?? false,
        skipTests: flags.skipTests ?? false,
        limits: LIMITS,
        // The bundle (cli/.bundle) and the sources sit at different depths: name the module from the root.
        wasmPath: process.env.MOORING_HELM_WASM || join(REPO_ROOT, 'bin/mooring-helm.wasm'),
      });
    } catch (err) {
      if (err instanceof HelmTemplateError)
        throw new CliError(`helm template of ${ref} failed: ${err.helmMessage}`);
      if (err instanceof HelmRenderError)
        throw new CliError(`helm template of ${ref} failed: ${err.message.split(chartDir).join(ref)}`);
      throw err;
    }
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
  }
}
