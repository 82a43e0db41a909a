// Writes an image as an OCI image layout directory (oci-layout, index.json, blobs/sha256/…) and
// the same files as one tar that both `podman load`/`skopeo copy oci-archive:` and `docker load`
// read (a manifest.json for Docker beside the OCI index, as Docker 25 itself writes). The manifest
// is serialised exactly as @mooring/oci's RegistryClient.push serialises it, so the digest built
// here is the digest a registry stores.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MediaTypes } from '@mooring/oci';
import type { Layer } from './layer.ts';
import { reproducibleTarArgs } from './layer.ts';

export const IMAGE_CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
export const LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export interface BuiltImage {
  /** The image manifest's digest: what `image@sha256:…` names. */
  digest: string;
  manifest: Buffer;
  config: Buffer;
  layers: Layer[];
  annotations: Record<string, string>;
}

function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The manifest bytes for a config and layers, keys in RegistryClient.push's order. */
export function imageManifest(
  config: Buffer,
  layers: Layer[],
  annotations: Record<string, string>,
): BuiltImage {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaTypes.ociManifest,
      config: { mediaType: IMAGE_CONFIG_MEDIA_TYPE, digest: sha256(config), size: config.length },
      layers: layers.map((l) => ({ mediaType: LAYER_MEDIA_TYPE, digest: l.digest, size: l.data.length })),
      annotations,
    }),
  );
  return { digest: sha256(manifest), manifest, config, layers, annotations };
}

/** Writes the layout into `dir` (emptied first) with `refName` (e.g. `ghcr.io/…/mooring:v0.1.0`) on the index. */
export function writeLayout(dir: string, image: BuiltImage, refName: string): void {
  rmSync(dir, { recursive: true, force: true });
  const blobs = join(dir, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const put = (data: Buffer): string => {
    const digest = sha256(data);
    writeFileSync(join(blobs, digest.slice('sha256:'.length)), data);
    return digest;
  };
  put(image.config);
  for (const l of image.layers) put(l.data);
  put(image.manifest);
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  const tag = refName.slice(refName.lastIndexOf(':') + 1);
  const index = {
    schemaVersion: 2,
    mediaType: MediaTypes.ociIndex,
    manifests: [
      {
        mediaType: MediaTypes.ociManifest,
        digest: image.digest,
        size: image.manifest.length,
        annotations: { 'io.containerd.image.name': refName, 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
  writeFileSync(join(dir, 'index.json'), JSON.stringify(index));
  const hex = (d: string): string => `blobs/sha256/${d.slice('sha256:'.length)}`;
  const docker = [
    {
      Config: hex(sha256(image.config)),
      RepoTags: [refName],
      Layers: image.layers.map((l) => hex(l.digest)),
    },
  ];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(docker));
}

/** The layout directory as one uncompressed tar, reproducibly. */
export function archiveLayout(dir: string, file: string, epochSeconds: number): void {
  const r = spawnSync(
    'tar',
    ['--create', `--file=${file}`, ...reproducibleTarArgs(epochSeconds), '-C', dir, '.'],
    {
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`tar of ${dir} failed: ${r.stderr.trim()}`);
}
