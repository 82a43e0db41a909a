/** A repository in a registry. `host` has no scheme (e.g. `127.0.0.1:5000`, `ghcr.io`). */
export interface OciReference {
  host: string;
  repository: string;
}

// Grammar from the distribution reference spec (distribution/reference: regexp.go).
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[a-fA-F0-9:]+\])(?::[0-9]{1,5})?$/;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const MAX_NAME = 255;

/** Hosts that all mean Docker Hub. */
export const DOCKER_HUB_ALIASES: readonly string[] = [
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
  'registry.hub.docker.com',
];

/** The host to send API requests to: Docker Hub's names all go to `registry-1.docker.io`. */
export function apiHost(host: string): string {
  return DOCKER_HUB_ALIASES.includes(host.toLowerCase()) ? 'registry-1.docker.io' : host;
}

function checkRepository(repository: string, what: string): void {
  if (repository.length === 0) throw new Error(`${what} has no repository path.`);
  if (repository.length > MAX_NAME)
    throw new Error(`${what} has a repository path over ${MAX_NAME} characters.`);
  for (const part of repository.split('/')) {
    if (!COMPONENT.test(part)) {
      throw new Error(
        `${what} has an invalid repository path component "${part}" (lowercase letters, digits and single separators . _ __ - only).`,
      );
    }
  }
}

function checkHost(host: string, what: string): void {
  if (!HOST.test(host)) throw new Error(`${what} has an invalid registry host "${host}".`);
  const port = /:(\d+)$/.exec(host)?.[1];
  if (port && Number(port) > 65535) throw new Error(`${what} has an invalid port ${port}.`);
}

/** Parses `oci://host/repo` into a reference; tags, digests, other schemes and bad names are rejected. */
export function parseOciUrl(url: string): OciReference {
  const shown = JSON.stringify(url.length > 200 ? `${url.slice(0, 200)}…` : url);
  const what = `OCI URL ${shown}`;
  if (!url.startsWith('oci://')) throw new Error(`${what} must start with oci://.`);
  const rest = url.slice('oci://'.length).replace(/\/+$/, '');
  if (/[\s?#]/.test(rest)) throw new Error(`${what} must not contain whitespace, a query or a fragment.`);
  if (rest.includes('@')) {
    throw new Error(`${what} must not contain credentials or a digest; use a secret or spec.ref.digest.`);
  }
  const slash = rest.indexOf('/');
  if (slash <= 0) throw new Error(`${what} needs a host and a repository, as in oci://ghcr.io/org/repo.`);
  const host = rest.slice(0, slash).toLowerCase();
  const repository = rest.slice(slash + 1);
  checkHost(host, what);
  if (repository.includes(':')) throw new Error(`${what} must not contain a tag; use spec.ref.tag.`);
  checkRepository(repository, what);
  return { host, repository };
}

/**
 * Normalises an image name the way Docker does: `alpine` → `docker.io/library/alpine`,
 * `org/app` → `docker.io/org/app`, `ghcr.io/x/y` unchanged. Tags and digests are rejected.
 */
export function canonicalImageName(image: string): string {
  const ref = imageReference(image);
  return `${ref.host}/${ref.repository}`;
}

/** The OciReference of an image name (see canonicalImageName). */
export function imageReference(image: string): OciReference {
  const shown = JSON.stringify(image.length > 200 ? `${image.slice(0, 200)}…` : image);
  const what = `image ${shown}`;
  const name = image.trim();
  if (name.length === 0) throw new Error('image name is empty.');
  if (name.includes('://')) throw new Error(`${what} must not have a scheme; write it as host/path.`);
  if (name.includes('@')) throw new Error(`${what} must not contain a digest.`);
  if (/\s/.test(name)) throw new Error(`${what} must not contain whitespace.`);
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const hasHost = slash > 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let host = hasHost ? first.toLowerCase() : 'docker.io';
  let repository = hasHost ? name.slice(slash + 1) : name;
  if (repository.includes(':')) throw new Error(`${what} must not contain a tag.`);
  checkHost(host, what);
  if (DOCKER_HUB_ALIASES.includes(host)) {
    host = 'docker.io';
    if (!repository.includes('/')) repository = `library/${repository}`;
  }
  checkRepository(repository, what);
  return { host, repository };
}
