// Mooring's `mooring build` against the Go `kustomize build` on real repository trees: finding the
// kustomization folders, building each with both, and naming how they compare. Used by
// hack/realworld-report.ts (whole public repositories) and realworld.test.ts (the vendored trees).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, createConfinedFs, KustomizeError, toYAML } from '@mooring/kustomize';
import { createTwoFilesPatch } from 'diff';
import { renderDirectory } from '../../cli/src/render-local.ts';
import { helmRenderer } from '../../operators/kustomize/src/render/helm-renderer.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const KUSTOMIZE = join(ROOT, 'bin/kustomize');
const HELM = join(ROOT, 'bin/helm');

/** The vendored trees: realworld/<repository>/<path in it>/, each repository with LICENSE and SOURCE. */
export const REALWORLD_DIR = fileURLToPath(new URL('./realworld/', import.meta.url));

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const SKIP_DIRS = new Set(['.git', 'node_modules', 'vendor', 'third_party']);

/** Every folder under `root` that holds a kustomization file, sorted. */
export function kustomizationDirs(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.some((e) => (e.isFile() || e.isSymbolicLink()) && KUSTOMIZATION_FILES.includes(e.name)))
      found.push(dir);
    for (const e of entries) if (e.isDirectory() && !SKIP_DIRS.has(e.name)) walk(join(dir, e.name));
  };
  walk(root);
  return found.sort();
}

/** The folder's kustomization file text ('' when it cannot be read). */
function kustomizationText(dir: string): string {
  for (const name of KUSTOMIZATION_FILES) {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      // try the next name
    }
  }
  return '';
}

/** Whether the folder's own kustomization inflates Helm charts (kustomize then needs --enable-helm). */
export function usesHelmCharts(dir: string): boolean {
  return /^helmCharts\s*:/m.test(kustomizationText(dir));
}

export type BuildResult = { ok: true; output: string } | { ok: false; error: string };

/**
 * `bin/kustomize build <dir>` in a bare environment (no KUSTOMIZE_* or XDG settings of the caller's),
 * with bin/helm for a folder with helmCharts: (mooring build always renders charts).
 */
export async function kustomizeBuild(dir: string, loadRestrictorNone = false): Promise<BuildResult> {
  const helm = usesHelmCharts(dir) ? ['--enable-helm', '--helm-command', HELM] : [];
  const restrictor = loadRestrictorNone ? ['--load-restrictor', 'LoadRestrictionsNone'] : [];
  try {
    const { stdout } = await run(KUSTOMIZE, ['build', ...helm, ...restrictor, dir], {
      maxBuffer: 512 * 1024 * 1024,
      timeout: 180_000,
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
    });
    return { ok: true, output: stdout };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    return { ok: false, error: stderr || (err instanceof Error ? err.message : String(err)) };
  }
}

/** `mooring build <dir>`: the CLI's own code path. A crash (not a refusal) says so. */
export async function mooringBuild(dir: string): Promise<BuildResult> {
  try {
    return { ok: true, output: await renderDirectory(dir) };
  } catch (err) {
    if (err instanceof Error)
      return {
        ok: false,
        error: err.name === 'CliError' ? err.message : `crash: ${err.name}: ${err.message}`,
      };
    return { ok: false, error: `crash: ${String(err)}` };
  }
}

/**
 * The folder built as the Kustomization operator builds a source's path: kustomize's load
 * restrictor off (Flux's choice too), every file confined to the repository's folder instead.
 */
export async function operatorBuild(repoDir: string, dir: string): Promise<BuildResult> {
  try {
    const resources = await build(createConfinedFs(repoDir), relative(repoDir, dir) || '.', {
      loadRestrictions: 'none',
      helm: helmRenderer({ limits: { timeoutMs: 180_000, memoryBytes: 1 << 30 } }),
    });
    return { ok: true, output: toYAML(resources) };
  } catch (err) {
    if (err instanceof KustomizeError) return { ok: false, error: err.message };
    return { ok: false, error: `crash: ${String(err)}` };
  }
}

export type Verdict = 'identical' | 'both-error' | 'different' | 'mooring-refused' | 'mooring-accepted';

export const VERDICTS: readonly Verdict[] = [
  'identical',
  'both-error',
  'different',
  'mooring-refused',
  'mooring-accepted',
];

/** How Mooring's result compares with kustomize's. */
export function verdictOf(go: BuildResult, mooring: BuildResult): Verdict {
  if (go.ok && mooring.ok) return go.output === mooring.output ? 'identical' : 'different';
  if (go.ok) return 'mooring-refused';
  if (mooring.ok) return 'mooring-accepted';
  return 'both-error';
}

/** A unified diff of kustomize's output against Mooring's, cut to `maxLines`. */
export function shortDiff(expected: string, actual: string, maxLines = 30): string {
  const patch = createTwoFilesPatch('kustomize', 'mooring', expected, actual, '', '', { context: 2 });
  const lines = patch.split('\n').slice(2);
  const cut =
    lines.length > maxLines
      ? [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more lines`]
      : lines;
  return cut.join('\n');
}

/** The first line of an error, without the folder's absolute path, to group refusals by cause. */
export function reasonOf(error: string, dir: string): string {
  // kustomize prints deprecation warnings before its error.
  const lines = error.split('\n');
  const line = lines.find((l) => l.startsWith('Error:')) ?? lines[0] ?? '';
  return line.split(dir).join('<dir>').slice(0, 240);
}
