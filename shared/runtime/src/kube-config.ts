import { accessSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

// Mooring's own kubeconfig model, with @kubernetes/client-node's field names (the CLI and the tests
// read them). The operators used to load that library for this alone: 14 of the 16 MB of every
// operator bundle, about 0.4 s of each start and 40 MB of its RSS (docs/decisions.md).

/** A cluster entry: where the API server is and how its certificate is checked. */
export interface KubeCluster {
  name: string;
  server: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

/** An exec credential plugin (client.authentication.k8s.io), as a kubeconfig declares it. */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
  provideClusterInfo?: boolean;
}

/** An auth provider (oidc, gcp, azure): run by @kubernetes/client-node, loaded only for it. */
export interface AuthProviderConfig {
  name: string;
  config?: Record<string, string>;
}

/** A user entry: the credentials and the identity requests act as. */
export interface KubeUser {
  name: string;
  token?: string;
  /** Read again each time credentials are refreshed, so a projected token's rotation is seen. */
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  authProvider?: AuthProviderConfig;
  impersonateUser?: string;
  impersonateUid?: string;
  impersonateGroups?: string[];
  impersonateUserExtra?: Record<string, string[]>;
}

export interface KubeContext {
  name: string;
  cluster: string;
  user?: string;
  namespace?: string;
}

export interface KubeConfigOptions {
  clusters: KubeCluster[];
  users: KubeUser[];
  contexts: KubeContext[];
  currentContext?: string;
}

/** The in-cluster service-account folder every pod gets. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Fields = Record<string, unknown>;

const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function exists(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

function entries(doc: Fields, list: string): Fields[] {
  const value = doc[list];
  return Array.isArray(value) ? value.map((e) => (isFields(e) ? e : {})) : [];
}

function parseExec(value: unknown, where: string): ExecConfig | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isFields(value) || !str(value.command)) throw new Error(`${where}.exec has no command`);
  return {
    command: value.command as string,
    args: Array.isArray(value.args) ? value.args.map(String) : undefined,
    env: Array.isArray(value.env)
      ? value.env.filter(isFields).map((e) => ({ name: String(e.name), value: String(e.value ?? '') }))
      : undefined,
    apiVersion: str(value.apiVersion),
    provideClusterInfo: value.provideClusterInfo === true,
  };
}

function parseUser(elt: Fields, i: number): KubeUser {
  const name = str(elt.name);
  if (!name) throw new Error(`users[${i}].name is missing`);
  const u = isFields(elt.user) ? elt.user : {};
  const provider = u['auth-provider'];
  const groups = u['as-groups'];
  const extra = u['as-user-extra'];
  return {
    name,
    token: str(u.token),
    tokenFile: str(u['token-file']),
    certData: str(u['client-certificate-data']),
    certFile: str(u['client-certificate']),
    keyData: str(u['client-key-data']),
    keyFile: str(u['client-key']),
    username: str(u.username),
    password: typeof u.password === 'string' ? u.password : undefined,
    exec: parseExec(u.exec, `users[${i}]`),
    authProvider:
      isFields(provider) && str(provider.name)
        ? {
            name: provider.name as string,
            config: isFields(provider.config) ? (provider.config as Record<string, string>) : {},
          }
        : undefined,
    impersonateUser: str(u.as),
    impersonateUid: str(u['as-uid']),
    impersonateGroups: Array.isArray(groups) ? groups.map(String) : undefined,
    impersonateUserExtra: isFields(extra)
      ? Object.fromEntries(
          Object.entries(extra).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : [String(v)]]),
        )
      : undefined,
  };
}

function parseCluster(elt: Fields, i: number): KubeCluster {
  const name = str(elt.name);
  if (!name) throw new Error(`clusters[${i}].name is missing`);
  if (!isFields(elt.cluster)) throw new Error(`clusters[${i}].cluster is missing`);
  const c = elt.cluster;
  const server = str(c.server);
  if (!server) throw new Error(`clusters[${i}].cluster.server is missing`);
  return {
    name,
    server: server.replace(/\/$/, ''),
    caData: str(c['certificate-authority-data']),
    caFile: str(c['certificate-authority']),
    skipTLSVerify: c['insecure-skip-tls-verify'] === true,
    tlsServerName: str(c['tls-server-name']),
    proxyUrl: str(c['proxy-url']),
  };
}

function parseContext(elt: Fields, i: number): KubeContext {
  const name = str(elt.name);
  if (!name) throw new Error(`contexts[${i}].name is missing`);
  if (!isFields(elt.context)) throw new Error(`contexts[${i}].context is missing`);
  const cluster = str(elt.context.cluster);
  if (!cluster) throw new Error(`contexts[${i}].context.cluster is missing`);
  return { name, cluster, user: str(elt.context.user), namespace: str(elt.context.namespace) };
}

const absolute = (root: string, file: string | undefined): string | undefined =>
  file === undefined || isAbsolute(file) ? file : join(root, file);

/** First definition of a name wins, as client-go merges a $KUBECONFIG list. */
function mergeByName<T extends { name: string }>(into: T[], from: T[]): void {
  for (const item of from) if (!into.some((x) => x.name === item.name)) into.push(item);
}

/**
 * A kubeconfig: clusters, users, contexts and the current context, read from the operator's own
 * file, the default locations, or the pod's service account. Credentials are turned into TLS
 * options and headers by kube-credentials.ts.
 */
export class KubeConfig {
  clusters: KubeCluster[] = [];
  users: KubeUser[] = [];
  contexts: KubeContext[] = [];
  currentContext: string | undefined;

  getClusters(): KubeCluster[] {
    return this.clusters;
  }
  getUsers(): KubeUser[] {
    return this.users;
  }
  getContexts(): KubeContext[] {
    return this.contexts;
  }
  getCurrentContext(): string | undefined {
    return this.currentContext;
  }
  setCurrentContext(name: string): void {
    this.currentContext = name;
  }
  getContextObject(name: string | undefined): KubeContext | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }
  getCurrentCluster(): KubeCluster | null {
    const ctx = this.getContextObject(this.currentContext);
    return ctx ? (this.clusters.find((c) => c.name === ctx.cluster) ?? null) : null;
  }
  getCurrentUser(): KubeUser | null {
    const ctx = this.getContextObject(this.currentContext);
    return ctx ? (this.users.find((u) => u.name === ctx.user) ?? null) : null;
  }

  loadFromOptions(options: KubeConfigOptions): void {
    this.clusters = options.clusters;
    this.users = options.users;
    this.contexts = options.contexts;
    this.currentContext = options.currentContext;
  }

  /** Parses kubeconfig YAML (or JSON). Only for text the operator trusts: see untrusted-kubeconfig.ts. */
  loadFromString(text: string): void {
    const doc = parse(text) as unknown;
    const top = isFields(doc) ? doc : {};
    this.clusters = entries(top, 'clusters').map(parseCluster);
    this.users = entries(top, 'users').map(parseUser);
    this.contexts = entries(top, 'contexts').map(parseContext);
    this.currentContext = str(top['current-context']);
  }

  /** Reads a kubeconfig file; relative file paths in it are relative to its folder, as kubectl has them. */
  loadFromFile(file: string): void {
    this.loadFromString(readFileSync(file, 'utf8'));
    const root = dirname(file);
    for (const c of this.clusters) c.caFile = absolute(root, c.caFile);
    for (const u of this.users) {
      u.certFile = absolute(root, u.certFile);
      u.keyFile = absolute(root, u.keyFile);
      u.tokenFile = absolute(root, u.tokenFile);
    }
  }

  /**
   * kubectl's order: every file of $KUBECONFIG (the first to define a name or a current context
   * wins), else ~/.kube/config, else the pod's service account, else http://localhost:8080 (which
   * the transport refuses as plain HTTP, as client-node and kubectl do).
   */
  loadFromDefault(env: Record<string, string | undefined> = process.env): void {
    const files = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
    if (files.length > 0) {
      this.loadFromFile(files[0]!);
      for (const file of files.slice(1)) {
        const next = new KubeConfig();
        next.loadFromFile(file);
        mergeByName(this.clusters, next.clusters);
        mergeByName(this.users, next.users);
        mergeByName(this.contexts, next.contexts);
        this.currentContext ??= next.currentContext;
      }
      return;
    }
    const home = env.HOME ? join(env.HOME, '.kube', 'config') : undefined;
    if (home && exists(home)) this.loadFromFile(home);
    else if (exists(join(SERVICE_ACCOUNT_DIR, 'token'))) this.loadFromCluster(SERVICE_ACCOUNT_DIR, env);
    else
      this.loadFromOptions({
        clusters: [{ name: 'cluster', server: 'http://localhost:8080' }],
        users: [{ name: 'user' }],
        contexts: [{ name: 'loaded-context', cluster: 'cluster', user: 'user' }],
        currentContext: 'loaded-context',
      });
  }

  /**
   * In-cluster: the API server from KUBERNETES_SERVICE_HOST/PORT, its CA and the token (re-read as
   * it rotates) from the service-account folder, the namespace from its `namespace` file.
   */
  loadFromCluster(dir = SERVICE_ACCOUNT_DIR, env: Record<string, string | undefined> = process.env): void {
    const host = env.KUBERNETES_SERVICE_HOST ?? '';
    const port = env.KUBERNETES_SERVICE_PORT ?? '';
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const serverHost = host.includes(':') ? `[${host}]` : host;
    let namespace: string | undefined;
    try {
      namespace = readFileSync(join(dir, 'namespace'), 'utf8') || undefined;
    } catch {
      namespace = undefined;
    }
    this.loadFromOptions({
      clusters: [
        { name: 'inCluster', server: `${scheme}://${serverHost}:${port}`, caFile: join(dir, 'ca.crt') },
      ],
      users: [{ name: 'inClusterUser', tokenFile: join(dir, 'token') }],
      contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
      currentContext: 'inClusterContext',
    });
  }
}
