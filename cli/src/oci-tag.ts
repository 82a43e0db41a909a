import { checkTag, display, parseArtifactRef } from './oci-artifact-ref.ts';
import { type RegistryFlags, registryClient, registryFailure } from './oci-registry-access.ts';

export interface TagFlags extends RegistryFlags {
  tag: string[];
}

/** `mooring tag artifact`: puts the same manifest bytes under each new tag, so the digest is shared. */
export async function tagArtifact(url: string, flags: TagFlags, note: (line: string) => void): Promise<void> {
  const ref = parseArtifactRef(url, { tag: 'allow', digest: true });
  const tags = flags.tag.map((t) => checkTag(t, '--tag'));
  const from = ref.digest ?? ref.tag ?? 'latest';
  const shown = `${display(ref.repo)}${ref.digest ? '@' : ':'}${from}`;
  const client = registryClient(ref.repo, flags);
  for (const tag of tags) {
    note(`► tagging ${shown} as ${tag}`);
    let digest: string;
    try {
      ({ digest } = await client.tagManifest(ref.repo, from, tag));
    } catch (err) {
      throw registryFailure(err, ref.repo);
    }
    process.stdout.write(`✔ tagged ${display(ref.repo)}:${tag}@${digest}\n`);
  }
}
