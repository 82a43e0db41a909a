import { RegistryProtocolError } from './errors.ts';
import type { OciDescriptor, OciManifest } from './manifest.ts';

/**
 * The layer an OCIRepository turns into its artifact (Flux `spec.layerSelector`): the first layer
 * with `mediaType` when given, else the first layer. No match is a clear error.
 */
export function selectLayer(manifest: OciManifest, mediaType?: string): OciDescriptor {
  const layer = mediaType ? manifest.layers.find((l) => l.mediaType === mediaType) : manifest.layers[0];
  if (!layer) {
    throw new RegistryProtocolError(
      mediaType
        ? `the manifest has no layer with media type ${JSON.stringify(mediaType)} (it has ${manifest.layers.map((l) => l.mediaType).join(', ') || 'none'}).`
        : 'the manifest has no layers.',
    );
  }
  return layer;
}
