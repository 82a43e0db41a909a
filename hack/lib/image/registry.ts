// Moves the built image between its OCI layout directory and a registry over the distribution
// API (@mooring/oci, the client `mooring push artifact` uses): push for `hack/image push`, pull
// for the tests that run what `mooring install --registry` names. Credentials: MOORING_OCI_CREDS
// (user:password) or the docker config's auths, as the CLI reads them.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { imageReference, type OciReference, RegistryClient } from '@mooring/oci';
import { registryCredentials } from '../../../cli/src/oci-registry-access.ts';
import { IMAGE_CONFIG_MEDIA_TYPE } from './oci-layout.ts';

const TIMEOUT_MS = 10 * 60_000;

function client(ref: OciReference, insecure: boolean): RegistryClient {
  const credentials = registryCredentials(ref.host, undefined);
  return new RegistryClient({
    insecure,
    timeoutMs: TIMEOUT_MS,
    userAgent: 'mooring-hack-image',
    ...(credentials ? { credentials } : {}),
  });
}

interface LayoutManifest {
  config: { digest: string };
  layers: { mediaType: string; digest: string }[];
  annotations?: Record<string, string>;
}

const blob = (layout: string, digest: string): string =>
  join(layout, 'blobs/sha256', digest.slice('sha256:'.length));

/** Pushes the layout's image to `<registry>/mooring:<tag>`; the digest must stay the one built. */
export async function pushLayout(
  layout: string,
  registry: string,
  tag: string,
  opts: { insecure: boolean },
): Promise<{ reference: string; digest: string }> {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
    manifests: { digest: string }[];
  };
  const built = index.manifests[0]!.digest;
  const manifest = JSON.parse(readFileSync(blob(layout, built), 'utf8')) as LayoutManifest;
  const name = `${registry.replace(/\/+$/, '')}/mooring`;
  const ref = imageReference(name);
  const { digest } = await client(ref, opts.insecure).push(ref, tag, {
    config: { mediaType: IMAGE_CONFIG_MEDIA_TYPE, data: readFileSync(blob(layout, manifest.config.digest)) },
    layers: manifest.layers.map((l) => ({
      mediaType: l.mediaType,
      data: readFileSync(blob(layout, l.digest)),
    })),
    annotations: manifest.annotations,
  });
  if (digest !== built) throw new Error(`the registry was sent manifest ${digest}, not the built ${built}`);
  return { reference: `${name}:${tag}`, digest };
}

/** What a pull leaves: the manifest digest, the config blob and the layer blobs, in order. */
export interface PulledImage {
  digest: string;
  configFile: string;
  layerFiles: string[];
}

/** Pulls `image` (`host/path:tag`, as a Deployment names it) as blobs into `dir`, each verified. */
export async function pullImage(
  image: string,
  dir: string,
  opts: { insecure: boolean },
): Promise<PulledImage> {
  const colon = image.lastIndexOf(':');
  const ref = imageReference(image.slice(0, colon));
  const registry = client(ref, opts.insecure);
  const resolved = await registry.resolveManifest(ref, image.slice(colon + 1));
  await mkdir(join(dir, 'blobs/sha256'), { recursive: true });
  const { config, layers } = resolved.manifest;
  for (const d of [config, ...layers])
    await registry.fetchBlob(ref, { digest: d.digest, size: d.size }, blob(dir, d.digest));
  return {
    digest: resolved.digest,
    configFile: blob(dir, config.digest),
    layerFiles: layers.map((l) => blob(dir, l.digest)),
  };
}
