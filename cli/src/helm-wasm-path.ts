import { join } from 'node:path';

/**
 * The Helm renderer module: $MOORING_HELM_WASM (the image sets it), else this checkout's, found
 * from wherever the CLI bundle runs. The CLI's paths load only in that case: the in-cluster UI
 * runs from the image, where there is no checkout to find.
 */
export async function helmWasmPath(): Promise<string> {
  return (
    process.env.MOORING_HELM_WASM || join((await import('./cli-paths.ts')).REPO_ROOT, 'bin/mooring-helm.wasm')
  );
}
