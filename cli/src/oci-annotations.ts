/**
 * The OCI annotations Flux writes on `push artifact` and its OCIRepository copies into
 * `status.artifact.metadata`.
 */
export const Annotations = {
  source: 'org.opencontainers.image.source',
  revision: 'org.opencontainers.image.revision',
  created: 'org.opencontainers.image.created',
} as const;

/**
 * The URL without a password, and for http(s) without a user either (tokens are often passed as the
 * user, as in https://<token>@github.com/...). `git config remote.origin.url` may hold either, and an
 * annotation is public to everyone who can pull.
 */
export function withoutUserinfo(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text; // scp-like git@host:path has no password
  }
  if (!url.username && !url.password) return text;
  if (url.protocol === 'http:' || url.protocol === 'https:') url.username = '';
  url.password = '';
  return url.toString();
}

/** An annotation for the terminal: a registry could send escape sequences or newlines. */
export function printable(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** The source annotation as shown: printable and without credentials. */
export function shownSource(value: string | undefined): string {
  return value ? printable(withoutUserinfo(value)) : '';
}
