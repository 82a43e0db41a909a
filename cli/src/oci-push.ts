import {
  MediaTypes,
  type OciReference,
  type RegistryClient,
  RegistryNotFoundError,
  RegistryProtocolError,
  sha256Digest,
} from '@mooring/oci';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { Annotations, withoutUserinfo } from './oci-annotations.ts';
import { display, parseArtifactRef } from './oci-artifact-ref.ts';
import { DEFAULT_IGNORE_PATHS, packForPush } from './oci-pack.ts';
import { type RegistryFlags, registryClient, registryFailure } from './oci-registry-access.ts';

export interface PushFlags extends RegistryFlags {
  path: string;
  source: string;
  revision: string;
  annotations?: string[];
  ignorePaths?: string[];
  reproducible?: boolean;
  output?: 'json';
}

// Flux's config blob is an empty JSON object under its own media type.
const CONFIG = Buffer.from('{}');
const EPOCH = '1970-01-01T00:00:00Z';

/** `key=value` flags as a map; a malformed one is a usage error. */
function parseAnnotations(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values ?? []) {
    const eq = value.indexOf('=');
    if (eq < 1)
      throw new CliError(
        `--annotations '${value}' is not key=value: write it as --annotations name=value.`,
        EXIT_ERROR,
      );
    out[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return out;
}

/** Keys in byte order, so the manifest (and its digest) never depends on flag order. */
function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** RFC 3339 in seconds, as Flux writes the created annotation. */
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * When the tag already holds exactly this content and these annotations, its created time, so that
 * pushing an unchanged tree again yields the same manifest digest instead of a new one.
 */
async function unchangedSince(
  client: RegistryClient,
  repo: OciReference,
  tag: string,
  layerDigest: string,
  annotations: Record<string, string>,
): Promise<string | undefined> {
  let existing: Awaited<ReturnType<RegistryClient['resolveManifest']>>;
  try {
    existing = await client.resolveManifest(repo, tag);
  } catch (err) {
    // No such tag, or something that is not an artifact manifest (an image index): push over it.
    if (err instanceof RegistryNotFoundError || err instanceof RegistryProtocolError) return undefined;
    throw err;
  }
  const { config, layers } = existing.manifest;
  const sameContent =
    config.mediaType === MediaTypes.fluxConfig &&
    config.digest === sha256Digest(CONFIG) &&
    layers.length === 1 &&
    layers[0]!.mediaType === MediaTypes.fluxContent &&
    layers[0]!.digest === layerDigest &&
    layers[0]!.annotations === undefined;
  const { [Annotations.created]: created, ...rest } = existing.annotations;
  const sameAnnotations = JSON.stringify(sorted(rest)) === JSON.stringify(sorted(annotations));
  return sameContent && sameAnnotations ? created : undefined;
}

/** `mooring push artifact`: packs --path deterministically and pushes it with Flux's media types. */
export async function pushArtifact(
  url: string,
  flags: PushFlags,
  note: (line: string) => void,
): Promise<void> {
  const ref = parseArtifactRef(url, { tag: 'allow', digest: false });
  const tag = ref.tag ?? 'latest';
  const target = `${display(ref.repo)}:${tag}`;
  if (!flags.source.trim()) throw new CliError('--source is empty: pass the Git remote URL.', EXIT_ERROR);
  if (!flags.revision.trim())
    throw new CliError('--revision is empty: pass it as <branch>@sha1:<commit>.', EXIT_ERROR);
  const source = withoutUserinfo(flags.source);
  if (source !== flags.source) note('► removed the credentials from --source: they are never published');
  const extra = parseAnnotations(flags.annotations);
  const base = sorted({
    [Annotations.source]: source,
    [Annotations.revision]: flags.revision,
    ...extra,
  });
  const ignorePaths = flags.ignorePaths
    ? flags.ignorePaths.flatMap((p) => p.split(',')).filter((p) => p.trim() !== '')
    : DEFAULT_IGNORE_PATHS;

  // Before packing, so a malformed --creds fails fast.
  const client = registryClient(ref.repo, flags);
  const packed = await packForPush(flags.path, ignorePaths);
  note(`► packed ${packed.files} file${packed.files === 1 ? '' : 's'} from ${flags.path}`);
  for (const rel of packed.skipped)
    note(`► skipped ${rel}: only regular files are published, links are not followed`);

  let digest: string;
  try {
    let created = extra[Annotations.created];
    if (created === undefined && flags.reproducible) created = EPOCH;
    if (created === undefined) {
      const kept = await unchangedSince(client, ref.repo, tag, packed.digest, base);
      if (kept) note(`► content unchanged since ${kept}: keeping the digest`);
      created = kept ?? now();
    }
    note(`► pushing artifact to ${target}`);
    ({ digest } = await client.push(ref.repo, tag, {
      config: { mediaType: MediaTypes.fluxConfig, data: CONFIG },
      layers: [{ mediaType: MediaTypes.fluxContent, data: packed.data }],
      annotations: sorted({ ...base, [Annotations.created]: created }),
    }));
  } catch (err) {
    throw registryFailure(err, ref.repo);
  }
  const done = `✔ pushed ${target}@${digest}\n`;
  if (flags.output === 'json') {
    const info = {
      url: `${target}@${digest}`,
      repository: `${ref.repo.host}/${ref.repo.repository}`,
      tag,
      digest,
    };
    process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
    process.stderr.write(done);
  } else {
    process.stdout.write(done);
  }
}
