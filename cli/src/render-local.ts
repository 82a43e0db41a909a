import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { KUSTOMIZE_API_VERSION, type Kustomization } from '@mooring/api';
import { build, createConfinedFs, KustomizeError, toYAML } from '@mooring/kustomize';
import {
  defaultHelmRenderLimits,
  folderSource,
  type HelmRenderSettings,
  helmRenderer,
  RenderObjectNotFoundError,
  type RenderSpec,
  renderSpecOf,
  renderSteps,
  runRender,
} from '@mooring/kustomize-operator/render';
import {
  ApiError,
  type KubeClient,
  type KubeObject,
  RetryableError,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { CliError } from './cli-error.ts';
import { helmWasmPath } from './helm-wasm-path.ts';

/** The operator's Helm limits, with the renderer module of the image or of this checkout. */
async function helmSettings(): Promise<HelmRenderSettings> {
  return { limits: defaultHelmRenderLimits, wasmPath: await helmWasmPath() };
}

/** Splits a local directory into a confined root (the filesystem root) and a path inside it. */
function confine(dir: string): { root: string; path: string } {
  const abs = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new CliError(`${dir} is not a directory: pass the folder that holds the manifests.`, 2);
  // `../base` may point anywhere, as with `kustomize build`, so the root is the top-level folder
  // (`/home`, `/work`): createConfinedFs refuses every path when its root is `/` itself.
  const real = realpathSync(abs);
  const top = real.split(sep)[1] ?? '';
  return { root: `${sep}${top}`, path: real.slice(top.length + 2) || '.' };
}

/**
 * The engine names files from the confined root (`tmp/site/app/a.yaml` for a build of `/tmp/site/app`);
 * a user reads them from where they ran the command (`app/a.yaml`, or `a.yaml` inside the folder).
 */
export function pathsFromCwd(message: string, root: string, cwd = process.cwd()): string {
  return message.replace(/(?<![\w/.@+-])([\w.@+-]+(?:\/[\w.@+-]+)+)/g, (token) => {
    const abs = join(root, token);
    return existsSync(abs) || isUnderExistingFolder(root, token) ? relative(cwd, abs) || '.' : token;
  });
}

// A path the message says is missing (`no chart found at …`) is still the tree's when its first two
// folders exist under the root (`tmp/site/…`); `apps/v1` and other slashed words are not.
function isUnderExistingFolder(root: string, token: string): boolean {
  const parts = token.split('/');
  return parts.length >= 3 && existsSync(join(root, parts[0]!, parts[1]!));
}

/**
 * `kustomize build <dir>` with Mooring's engine: the same YAML, byte for byte; `helmCharts:` render
 * as `--enable-helm` renders them, through the operator's sandboxed Helm renderer (offline, so
 * .Capabilities are a released helm's).
 */
export async function renderDirectory(dir: string): Promise<string> {
  const { root, path } = confine(dir);
  try {
    const helm = helmRenderer(await helmSettings());
    return toYAML(await build(createConfinedFs(root), path, { helm }));
  } catch (err) {
    if (err instanceof KustomizeError)
      throw new CliError(`kustomize build of ${dir} failed: ${pathsFromCwd(err.message, root)}`);
    throw err;
  }
}

/** Reads a Kustomization from the cluster. */
export async function getKustomization(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<Kustomization> {
  try {
    return await client.get<Kustomization & KubeObject>({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      namespace,
      name,
    });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new CliError(
        `Kustomization ${namespace}/${name} not found: list them with 'mooring get kustomizations -n ${namespace}'.`,
      );
    throw err;
  }
}

/** What the spec names for the render but the cluster lacks, said as what to do about it. */
function missingObject(err: RenderObjectNotFoundError): CliError {
  const what = `${err.field} names ${err.kind} ${err.namespace}/${err.objectName}, which does not exist`;
  return new CliError(
    err.field === 'postBuild.substituteFrom'
      ? `${what}: create it or mark it optional.`
      : `${what}: create it with the age key the files are encrypted for.`,
  );
}

/**
 * Renders `dir` through the operator's own render steps, with the folder as the source instead of
 * the artifact: the Kustomization's overrides, its decryption keys and postBuild variables read from
 * the cluster as the operator reads them, and the owner labels. What it prints is what the
 * operator would apply from the same files.
 */
export async function renderKustomization(
  client: KubeClient,
  ks: Kustomization,
  dir: string,
): Promise<KubeObject[]> {
  const { root, path } = confine(dir);
  // The operator refuses it before it renders (its 'validate spec' step), so nothing would be applied.
  if (ks.spec.decryption?.serviceAccountName)
    throw new CliError('decryption.serviceAccountName is not supported yet; use secretRef');
  let spec: RenderSpec;
  try {
    spec = await renderSpecOf(client, ks);
  } catch (err) {
    if (err instanceof RenderObjectNotFoundError) throw missingObject(err);
    throw err;
  }
  try {
    const rendered = await runRender(
      renderSteps(folderSource(root)),
      { ...spec, path },
      new AbortController().signal,
      await helmSettings(),
    );
    return rendered.manifests as KubeObject[];
  } catch (err) {
    if (err instanceof RetryableError && err.cause instanceof KustomizeError)
      throw new CliError(`kustomize build of ${dir} failed: ${pathsFromCwd(err.cause.message, root)}`);
    // The operator's reason would be the condition's; its message is the sentence to show.
    if (err instanceof RetryableError || err instanceof StalledError || err instanceof WaitingError)
      throw new CliError(err.message);
    throw err;
  }
}

/** The rendered objects as multi-document YAML, in kustomize's emitter. */
export function objectsToYAML(objects: KubeObject[]): string {
  return toYAML(objects.map((object) => ({ object: object as never, previousIds: [] })));
}
