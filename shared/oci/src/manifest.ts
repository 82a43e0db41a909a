import { isDigest } from './digest.ts';
import { RegistryProtocolError } from './errors.ts';

/** Media types this package reads and writes. */
export const MediaTypes = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  fluxConfig: 'application/vnd.cncf.flux.config.v1+json',
  fluxContent: 'application/vnd.cncf.flux.content.v1.tar+gzip',
} as const;

/** Every manifest media type a registry may answer with; sent as Accept. */
export const MANIFEST_ACCEPT = [
  MediaTypes.ociManifest,
  MediaTypes.dockerManifest,
  MediaTypes.ociIndex,
  MediaTypes.dockerManifestList,
].join(', ');

/** A content descriptor: what a manifest says about one blob. */
export interface OciDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** A validated OCI image manifest (or Docker v2 schema 2, which has the same shape). */
export interface OciManifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: OciDescriptor;
  layers: OciDescriptor[];
  annotations: Record<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function annotations(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new RegistryProtocolError(`${where} has "annotations" that is not an object.`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string')
      throw new RegistryProtocolError(`${where} has annotation "${k}" that is not a string.`);
    out[k] = v;
  }
  return out;
}

function descriptor(value: unknown, where: string): OciDescriptor {
  if (!isRecord(value)) throw new RegistryProtocolError(`${where} is missing or not an object.`);
  const { mediaType, digest, size } = value;
  if (typeof mediaType !== 'string' || mediaType.length === 0) {
    throw new RegistryProtocolError(`${where} has no mediaType.`);
  }
  if (typeof digest !== 'string' || !isDigest(digest)) {
    throw new RegistryProtocolError(`${where} has a missing or unsupported digest.`);
  }
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw new RegistryProtocolError(`${where} has a missing or invalid size.`);
  }
  const out: OciDescriptor = { mediaType, digest, size };
  const ann = annotations(value.annotations, where);
  if (Object.keys(ann).length > 0) out.annotations = ann;
  return out;
}

/** True for OCI image indexes and Docker manifest lists. */
export function isIndexMediaType(mediaType: string): boolean {
  return mediaType === MediaTypes.ociIndex || mediaType === MediaTypes.dockerManifestList;
}

/**
 * Parses and validates manifest bytes. `contentType` is the response's Content-Type, used when the
 * body has no `mediaType`. Indexes and anything but schema 2 image manifests are refused clearly.
 */
export function parseManifest(body: Buffer, contentType: string | undefined, what: string): OciManifest {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw new RegistryProtocolError(`the manifest of ${what} is not valid JSON.`);
  }
  if (!isRecord(doc)) throw new RegistryProtocolError(`the manifest of ${what} is not a JSON object.`);
  const headerType = contentType?.split(';')[0]?.trim();
  const mediaType = typeof doc.mediaType === 'string' ? doc.mediaType : headerType;
  if (mediaType && isIndexMediaType(mediaType)) {
    throw new RegistryProtocolError(
      `${what} is an image index (multi-platform image), not a single artifact manifest; point to one of its manifests by digest.`,
    );
  }
  if (doc.schemaVersion !== 2) {
    throw new RegistryProtocolError(
      `the manifest of ${what} has schemaVersion ${JSON.stringify(doc.schemaVersion)}, want 2.`,
    );
  }
  if (Array.isArray(doc.manifests)) {
    throw new RegistryProtocolError(`${what} is an image index, not a single artifact manifest.`);
  }
  if (mediaType !== MediaTypes.ociManifest && mediaType !== MediaTypes.dockerManifest) {
    throw new RegistryProtocolError(
      `the manifest of ${what} has unsupported media type ${JSON.stringify(mediaType ?? null)}.`,
    );
  }
  const config = descriptor(doc.config, `the manifest of ${what}: config`);
  if (!Array.isArray(doc.layers))
    throw new RegistryProtocolError(`the manifest of ${what} has no layers array.`);
  const layers = doc.layers.map((layer, i) => descriptor(layer, `the manifest of ${what}: layer ${i}`));
  const manifest: OciManifest = {
    schemaVersion: 2,
    mediaType,
    config,
    layers,
    annotations: annotations(doc.annotations, `the manifest of ${what}`),
  };
  if (typeof doc.artifactType === 'string') manifest.artifactType = doc.artifactType;
  return manifest;
}
