export { isDigest, parseDigest, sha256Digest } from './digest.ts';
export type { RegistryCredentials } from './docker-config.ts';
export { credentialsFromDockerConfig } from './docker-config.ts';
export {
  ContentTooLargeError,
  DigestMismatchError,
  LocalWriteError,
  RegistryAuthError,
  RegistryError,
  RegistryNotFoundError,
  RegistryProtocolError,
  RegistryUnavailableError,
} from './errors.ts';
export { selectLayer } from './layer-selector.ts';
export {
  isIndexMediaType,
  MediaTypes,
  type OciDescriptor,
  type OciManifest,
  parseManifest,
} from './manifest.ts';
export { apiHost, canonicalImageName, imageReference, type OciReference, parseOciUrl } from './reference.ts';
export {
  MAX_MANIFEST_BYTES,
  type PushArtifact,
  RegistryClient,
  type RegistryClientOptions,
  type ResolvedManifest,
} from './registry-client.ts';
export { pickSemverTag } from './semver-tags.ts';
