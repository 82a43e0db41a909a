import { DOCKER_HUB_ALIASES } from './reference.ts';

/** Credentials for one registry: basic username/password, or an identity (refresh) token. */
export interface RegistryCredentials {
  username?: string;
  password?: string;
  identityToken?: string;
}

interface AuthEntry {
  auth?: unknown;
  username?: unknown;
  password?: unknown;
  identitytoken?: unknown;
}

/** `https://index.docker.io/v1/` → `index.docker.io`; keys may carry a scheme and a path. */
function normaliseKey(key: string): string {
  return key
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

function sameRegistry(a: string, b: string): boolean {
  if (a === b) return true;
  return DOCKER_HUB_ALIASES.includes(a) && DOCKER_HUB_ALIASES.includes(b);
}

/**
 * Credentials for a host from a `.dockerconfigjson` Secret value (`auths[host].auth` base64 or
 * username/password, `identitytoken`; Docker Hub aliases match each other); undefined when absent.
 * Errors never quote the document, which holds secrets.
 */
export function credentialsFromDockerConfig(json: string, host: string): RegistryCredentials | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    // JSON.parse's message can quote the input, i.e. the secret: say only what failed.
    throw new Error('the .dockerconfigjson value is not valid JSON.');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error('the .dockerconfigjson value is not a JSON object.');
  const auths = (doc as { auths?: unknown }).auths;
  if (auths === undefined) return undefined;
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) {
    throw new Error('the .dockerconfigjson value has an "auths" field that is not an object.');
  }
  const wanted = normaliseKey(host);
  // An exact key wins over an alias, so a config with both docker.io and index.docker.io is predictable.
  const entries = Object.entries(auths as Record<string, unknown>);
  const match =
    entries.find(([key]) => normaliseKey(key) === wanted) ??
    entries.find(([key]) => sameRegistry(normaliseKey(key), wanted));
  if (!match) return undefined;
  const [key, raw] = match;
  if (typeof raw !== 'object' || raw === null) {
    throw new Error(`the .dockerconfigjson entry for ${normaliseKey(key)} is not an object.`);
  }
  const entry = raw as AuthEntry;
  const creds: RegistryCredentials = {};
  if (typeof entry.auth === 'string' && entry.auth.length > 0) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw new Error(
        `the .dockerconfigjson entry for ${normaliseKey(key)} has an "auth" value that is not base64 of user:password.`,
      );
    }
    creds.username = decoded.slice(0, colon);
    creds.password = decoded.slice(colon + 1);
  }
  if (typeof entry.username === 'string' && entry.username.length > 0) creds.username = entry.username;
  if (typeof entry.password === 'string' && entry.password.length > 0) creds.password = entry.password;
  if (typeof entry.identitytoken === 'string' && entry.identitytoken.length > 0) {
    creds.identityToken = entry.identitytoken;
  }
  if (creds.username === undefined && creds.password === undefined && creds.identityToken === undefined) {
    return undefined;
  }
  return creds;
}
