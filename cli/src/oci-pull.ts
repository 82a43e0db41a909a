import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ArtifactTooLargeError, DEFAULT_LIMITS, extractTarGz, UnsafeArchiveError } from '@mooring/artifact';
import { MediaTypes, selectLayer } from '@mooring/oci';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { Annotations, printable, shownSource } from './oci-annotations.ts';
import { display, parseArtifactRef } from './oci-artifact-ref.ts';
import { type RegistryFlags, registryClient, registryFailure } from './oci-registry-access.ts';

export interface PullFlags extends RegistryFlags {
  output: string;
}

/** The mode to give the output folder afterwards: extraction swaps in a private (0700) scratch folder. */
async function checkOutput(dir: string): Promise<number> {
  let mode: number;
  try {
    const st = await stat(dir);
    if (!st.isDirectory())
      throw new CliError(`--output ${dir} is a file: pass a new or empty folder.`, EXIT_ERROR);
    mode = st.mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0o755;
    throw err;
  }
  if ((await readdir(dir)).length > 0)
    throw new CliError(`--output ${dir} is not empty: pass a new or empty folder.`, EXIT_ERROR);
  return mode;
}

/** `mooring pull artifact`: resolves the tag or digest, downloads the content layer verified, extracts it confined. */
export async function pullArtifact(
  url: string,
  flags: PullFlags,
  note: (line: string) => void,
): Promise<void> {
  const ref = parseArtifactRef(url, { tag: 'allow', digest: true });
  const wanted = ref.digest ?? ref.tag ?? 'latest';
  const shown = `${display(ref.repo)}${ref.digest ? `@${ref.digest}` : `:${wanted}`}`;
  const dest = resolve(flags.output);
  const mode = await checkOutput(dest);
  const client = registryClient(ref.repo, flags);
  const scratch = await mkdtemp(join(tmpdir(), 'mooring-pull-'));
  try {
    note(`► pulling artifact from ${shown}`);
    let resolved: Awaited<ReturnType<typeof client.resolveManifest>>;
    const blob = join(scratch, 'layer.tar.gz');
    try {
      resolved = await client.resolveManifest(ref.repo, wanted);
      const { manifest } = resolved;
      // Flux's content layer when there is one, else the first (as an OCIRepository without layerSelector).
      const layer =
        manifest.layers.find((l) => l.mediaType === MediaTypes.fluxContent) ?? selectLayer(manifest);
      await client.fetchBlob(ref.repo, layer, blob, { maxBytes: DEFAULT_LIMITS.maxTotalBytes });
    } catch (err) {
      throw registryFailure(err, ref.repo);
    }
    let files: number;
    try {
      ({ files } = await extractTarGz(blob, dest));
    } catch (err) {
      if (err instanceof UnsafeArchiveError || err instanceof ArtifactTooLargeError)
        throw new CliError(`the artifact ${shown} was not extracted: ${err.message}.`);
      throw err;
    }
    await chmod(dest, mode);
    const source = resolved.annotations[Annotations.source];
    const revision = resolved.annotations[Annotations.revision];
    const lines = [
      ...(source ? [`✔ source ${shownSource(source)}`] : []),
      ...(revision ? [`✔ revision ${printable(revision)}`] : []),
      `✔ digest ${resolved.digest}`,
      `✔ extracted ${files} file${files === 1 ? '' : 's'} to ${flags.output}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
