import {
  type OciReference,
  type RegistryClient,
  RegistryNotFoundError,
  RegistryProtocolError,
} from '@mooring/oci';
import { formatTable } from './object-status.ts';
import { Annotations, printable, shownSource } from './oci-annotations.ts';
import { display, parseArtifactRef } from './oci-artifact-ref.ts';
import { type RegistryFlags, registryClient, registryFailure } from './oci-registry-access.ts';

export interface ListFlags extends RegistryFlags {
  output?: 'json';
}

interface ListedArtifact {
  url: string;
  tag: string;
  digest: string;
  source: string;
  revision: string;
}

// Manifests fetched at once: enough to hide latency, few enough not to trip registry rate limits.
const CONCURRENCY = 8;

/** One tag's row; undefined when the tag vanished between listing and reading it. */
async function describeTag(
  client: RegistryClient,
  repo: OciReference,
  tag: string,
): Promise<ListedArtifact | undefined> {
  const url = `${display(repo)}:${tag}`;
  try {
    const { digest, annotations } = await client.resolveManifest(repo, tag);
    return {
      url,
      tag,
      digest,
      source: shownSource(annotations[Annotations.source]),
      revision: printable(annotations[Annotations.revision] ?? ''),
    };
  } catch (err) {
    if (err instanceof RegistryNotFoundError) return undefined;
    // An image index or another kind of manifest: still a tag, with a digest but no artifact metadata.
    if (err instanceof RegistryProtocolError)
      return { url, tag, digest: await client.headDigest(repo, tag), source: '', revision: '' };
    throw err;
  }
}

/** Maps with at most `limit` calls in flight, keeping the input order. */
async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** `mooring list artifacts`: every tag of the repository with its digest, source and revision. */
export async function listArtifacts(url: string, flags: ListFlags): Promise<void> {
  const { repo } = parseArtifactRef(url, { tag: 'refuse', digest: false });
  const client = registryClient(repo, flags);
  let artifacts: ListedArtifact[];
  try {
    let tags: string[];
    try {
      tags = await client.listTags(repo);
    } catch (err) {
      // A repository nobody pushed to yet: no artifacts, as `get` prints nothing for no objects.
      if (!(err instanceof RegistryNotFoundError)) throw err;
      tags = [];
    }
    tags.sort();
    const rows = await mapLimited(tags, CONCURRENCY, (tag) => describeTag(client, repo, tag));
    artifacts = rows.filter((r): r is ListedArtifact => r !== undefined);
  } catch (err) {
    throw registryFailure(err, repo);
  }
  if (flags.output === 'json') {
    process.stdout.write(`${JSON.stringify(artifacts, null, 2)}\n`);
    return;
  }
  if (artifacts.length === 0) {
    process.stderr.write(`no artifacts found in ${display(repo)}\n`);
    return;
  }
  const rows = artifacts.map((a) => [a.url, a.digest, a.source, a.revision]);
  process.stdout.write(formatTable(['ARTIFACT', 'DIGEST', 'SOURCE', 'REVISION'], rows));
}
