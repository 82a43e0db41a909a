import { parse } from 'yaml';
import { KubeConfig } from './kube-config.ts';

/**
 * A kubeconfig written by someone the operator does not trust (a tenant's Secret), turned into an
 * allow-listed shape before any library sees it.
 *
 * A kubeconfig may name a token file, certificate and CA paths, exec plugins and auth providers,
 * which the operator's own kubeconfig loading reads and runs (as @kubernetes/client-node does,
 * which even reads `token-file` while it parses). Any of these lets a tenant make the operator
 * read its own files (its service-account token, say) or run a program (Flux's CVE-2022-24817
 * class). So the text is parsed here as plain YAML, every field is checked against what inline
 * credentials need, and only then is a KubeConfig built from options: the general kubeconfig
 * loader never sees the tenant's text.
 */
export class UntrustedKubeConfigError extends Error {
  override name = 'UntrustedKubeConfigError';
}

/** Fields that name a local file or run code, with what to write instead. */
const REFUSED: Record<string, string> = {
  'token-file': 'names a token file on the operator; inline the token (token)',
  tokenFile: 'names a token file on the operator; inline the token (token)',
  'client-certificate': 'points at a certificate file; inline it (client-certificate-data)',
  'client-key': 'points at a key file; inline it (client-key-data)',
  'certificate-authority': 'points at a CA file; inline it (certificate-authority-data)',
  exec: 'uses an exec credential plugin, which Mooring never runs',
  'auth-provider': 'uses an auth provider, which Mooring does not run',
  'proxy-url': 'sets proxy-url, which Mooring does not follow; reach the API server directly',
  as: 'impersonates (as); use the Kustomization serviceAccountName instead',
  'as-uid': 'impersonates (as-uid); use the Kustomization serviceAccountName instead',
  'as-groups': 'impersonates (as-groups); use the Kustomization serviceAccountName instead',
  'as-user-extra': 'impersonates (as-user-extra); use the Kustomization serviceAccountName instead',
};

const TOP_FIELDS = new Set([
  'apiVersion',
  'kind',
  'clusters',
  'users',
  'contexts',
  'current-context',
  'preferences',
  'extensions',
]);
const CLUSTER_FIELDS = new Set([
  'server',
  'certificate-authority-data',
  'tls-server-name',
  'insecure-skip-tls-verify',
  'disable-compression',
  'extensions',
]);
const USER_FIELDS = new Set([
  'token',
  'client-certificate-data',
  'client-key-data',
  'username',
  'password',
  'extensions',
]);
const CONTEXT_FIELDS = new Set(['cluster', 'user', 'namespace', 'extensions']);

// A kubeconfig is a few kilobytes; a bigger Secret value is not one.
const MAX_BYTES = 1024 * 1024;

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkFields(where: string, value: unknown, allowed: Set<string>): Fields {
  if (!isFields(value)) throw new UntrustedKubeConfigError(`${where} is not a mapping`);
  for (const key of Object.keys(value)) {
    const why = Object.hasOwn(REFUSED, key) ? REFUSED[key] : undefined;
    if (why) throw new UntrustedKubeConfigError(`${where} ${why}`);
    if (!allowed.has(key)) {
      throw new UntrustedKubeConfigError(
        `${where} has '${key}', which Mooring does not accept (allowed: ${[...allowed].join(', ')})`,
      );
    }
  }
  return value;
}

function optionalString(where: string, fields: Fields, key: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new UntrustedKubeConfigError(`${where} '${key}' is not a string`);
  return value;
}

interface Named {
  name: string;
  body: Fields;
}

/** The entries of `clusters`, `users` or `contexts`, each checked against its allow-list. */
function namedEntries(doc: Fields, list: string, inner: string, allowed: Set<string>): Named[] {
  const value = doc[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new UntrustedKubeConfigError(`'${list}' is not a list`);
  return value.map((entry, i) => {
    const outer = checkFields(`${list}[${i}]`, entry, new Set(['name', inner, 'extensions']));
    const name = optionalString(`${list}[${i}]`, outer, 'name');
    if (!name) throw new UntrustedKubeConfigError(`${list}[${i}] has no name`);
    const where = `${inner} '${name}'`;
    return { name, body: checkFields(where, outer[inner] ?? {}, allowed) };
  });
}

function pick(entries: Named[], name: string, what: string): Named {
  const found = entries.find((e) => e.name === name);
  if (!found) throw new UntrustedKubeConfigError(`the context names ${what} '${name}', which is not defined`);
  return found;
}

/** Parses a kubeconfig from a Secret into a KubeConfig holding only inline credentials. */
export function parseUntrustedKubeConfig(text: string): KubeConfig {
  if (Buffer.byteLength(text) > MAX_BYTES) {
    throw new UntrustedKubeConfigError(`the kubeconfig is larger than ${MAX_BYTES} bytes`);
  }
  let doc: unknown;
  try {
    // logLevel error: the library's warnings would quote a tenant's text on the operator's stderr.
    doc = parse(text, { maxAliasCount: 50, prettyErrors: false, logLevel: 'error' });
  } catch (err) {
    throw new UntrustedKubeConfigError(
      `the kubeconfig is not YAML: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  const top = checkFields('the kubeconfig', doc, TOP_FIELDS);
  const clusters = namedEntries(top, 'clusters', 'cluster', CLUSTER_FIELDS);
  const users = namedEntries(top, 'users', 'user', USER_FIELDS);
  const contexts = namedEntries(top, 'contexts', 'context', CONTEXT_FIELDS);

  const currentName = optionalString('the kubeconfig', top, 'current-context');
  const context = currentName
    ? pick(contexts, currentName, 'current-context')
    : contexts.length === 1
      ? contexts[0]
      : undefined;
  if (!context) {
    throw new UntrustedKubeConfigError(
      'the kubeconfig has no current-context (and not exactly one context to default to)',
    );
  }
  const clusterName = optionalString(`context '${context.name}'`, context.body, 'cluster') ?? '';
  const userName = optionalString(`context '${context.name}'`, context.body, 'user');
  const cluster = pick(clusters, clusterName, 'cluster');
  const user = userName ? pick(users, userName, 'user') : { name: '', body: {} };

  const server = optionalString(`cluster '${cluster.name}'`, cluster.body, 'server');
  if (!server) throw new UntrustedKubeConfigError(`cluster '${cluster.name}' has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UntrustedKubeConfigError(`cluster '${cluster.name}' server '${server}' is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UntrustedKubeConfigError(`cluster '${cluster.name}' server must be an https:// URL`);
  }
  const insecure = cluster.body['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw new UntrustedKubeConfigError(`cluster '${cluster.name}' insecure-skip-tls-verify is not a boolean`);
  }
  // As kubectl and @kubernetes/client-node: plain HTTP only when TLS checks are off on purpose.
  if (url.protocol === 'http:' && insecure !== true) {
    throw new UntrustedKubeConfigError(
      `cluster '${cluster.name}' server '${server}' is http://; use https:// (or set insecure-skip-tls-verify: true)`,
    );
  }

  const u = `user '${user.name}'`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'remote',
        server,
        caData: optionalString(`cluster '${cluster.name}'`, cluster.body, 'certificate-authority-data'),
        tlsServerName: optionalString(`cluster '${cluster.name}'`, cluster.body, 'tls-server-name'),
        skipTLSVerify: insecure === true,
      },
    ],
    users: [
      {
        name: 'remote',
        token: optionalString(u, user.body, 'token'),
        certData: optionalString(u, user.body, 'client-certificate-data'),
        keyData: optionalString(u, user.body, 'client-key-data'),
        username: optionalString(u, user.body, 'username'),
        password: optionalString(u, user.body, 'password'),
      },
    ],
    contexts: [
      {
        name: 'remote',
        cluster: 'remote',
        user: 'remote',
        namespace: optionalString(`context '${context.name}'`, context.body, 'namespace'),
      },
    ],
    currentContext: 'remote',
  });
  return kc;
}
