import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DEFAULT_LIMITS, extractTarGz } from '@mooring/artifact';
import { MediaTypes, type OciDescriptor } from '@mooring/oci';
import { CliError, EXIT_ERROR, EXIT_FAILURE } from './cli-error.ts';
import { display, parseArtifactRef } from './oci-artifact-ref.ts';
import { DEFAULT_IGNORE_PATHS, packForPush } from './oci-pack.ts';
import { type RegistryFlags, registryClient, registryFailure } from './oci-registry-access.ts';

export interface DiffFlags extends RegistryFlags {
  path: string;
  ignorePaths?: string[];
}

/** Every regular file below `dir` with the sha256 of its content, by POSIX path. */
async function fileDigests(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = join(entry.parentPath, entry.name);
    const digest = createHash('sha256')
      .update(await readFile(abs))
      .digest('hex');
    out.set(relative(dir, abs).split('\\').join('/'), digest);
  }
  return out;
}

/** `+ added`, `- removed`, `~ changed` lines, remote → local, in path order. */
function fileChanges(remote: Map<string, string>, local: Map<string, string>): string[] {
  const paths = [...new Set([...remote.keys(), ...local.keys()])].sort();
  const lines: string[] = [];
  for (const path of paths) {
    const before = remote.get(path);
    const after = local.get(path);
    if (before === after) continue;
    lines.push(before === undefined ? `+ ${path}` : after === undefined ? `- ${path}` : `~ ${path}`);
  }
  return lines;
}

/**
 * `mooring diff artifact`: does the artifact at `url` hold what `--path` packs to? The packing is
 * deterministic, so equal layer digests mean equal content; when they differ, both trees are
 * extracted (confined) and compared file by file. Exit 0 same, 1 different, 2 error, like
 * `diff kustomization`: a CI job can push only when something changed. Errors are turned into
 * exit 2 by the command.
 */
export async function diffArtifact(
  url: string,
  flags: DiffFlags,
  note: (line: string) => void,
): Promise<void> {
  const ref = parseArtifactRef(url, { tag: 'allow', digest: true });
  const wanted = ref.digest ?? ref.tag ?? 'latest';
  const shown = `${display(ref.repo)}${ref.digest ? `@${ref.digest}` : `:${wanted}`}`;
  const ignorePaths = flags.ignorePaths
    ? flags.ignorePaths.flatMap((p) => p.split(',')).filter((p) => p.trim() !== '')
    : DEFAULT_IGNORE_PATHS;
  const client = registryClient(ref.repo, flags);
  const packed = await packForPush(flags.path, ignorePaths);
  let layer: OciDescriptor;
  try {
    const resolved = await client.resolveManifest(ref.repo, wanted);
    const content = resolved.manifest.layers.filter((l) => l.mediaType === MediaTypes.fluxContent);
    if (content.length !== 1)
      throw new CliError(
        `${shown} is not an artifact of pushed manifests (it has ${content.length} content layers): diff only what 'mooring push artifact' pushed.`,
        EXIT_ERROR,
      );
    layer = content[0]!;
  } catch (err) {
    throw registryFailure(err, ref.repo);
  }
  if (layer.digest === packed.digest) {
    note(`✔ no changes: ${shown} holds what ${flags.path} packs to`);
    return;
  }
  note(`► ${shown} differs from ${flags.path}; comparing files`);
  const scratch = await mkdtemp(join(tmpdir(), 'mooring-diff-artifact-'));
  try {
    const blob = join(scratch, 'remote.tar.gz');
    const local = join(scratch, 'local.tar.gz');
    await client
      .fetchBlob(ref.repo, layer, blob, { maxBytes: DEFAULT_LIMITS.maxTotalBytes })
      .catch((err: unknown) => {
        throw registryFailure(err, ref.repo);
      });
    await writeFile(local, packed.data);
    await extractTarGz(blob, join(scratch, 'remote'));
    await extractTarGz(local, join(scratch, 'local'));
    const changes = fileChanges(
      await fileDigests(join(scratch, 'remote')),
      await fileDigests(join(scratch, 'local')),
    );
    // Same files, other bytes: only metadata the packer keeps (a mode) differs.
    process.stdout.write(
      changes.length ? `${changes.join('\n')}\n` : '~ file modes differ; the contents are the same\n',
    );
    process.exitCode = EXIT_FAILURE;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
