import { readFileSync } from 'node:fs';
import type { KubeConfig as ClientNodeKubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from './client-node.ts';
import { type ExecCredentialStatus, runExecPlugin } from './exec-credential.ts';
import type { KubeCluster, KubeConfig, KubeUser } from './kube-config.ts';

/** What an https.Agent needs from the kubeconfig to reach the API server. */
export interface TlsOptions {
  ca?: Buffer;
  cert?: Buffer | string;
  key?: Buffer | string;
  servername?: string;
  rejectUnauthorized?: boolean;
}

// How long an exec plugin's answer without an expirationTimestamp is used before it runs again.
const UNEXPIRING_EXEC_MS = 25_000;

const fileOrData = (file: string | undefined, data: string | undefined): Buffer | undefined =>
  file ? readFileSync(file) : data ? Buffer.from(data, 'base64') : undefined;

/**
 * The current context's cluster and user of a kubeconfig, as TLS options and request headers:
 * CA, client certificate and key (inline or from files), a bearer token (inline, from a file read
 * on every call, from an exec plugin cached until it expires, or from an auth provider), basic
 * auth, and the user's impersonation (`as`, `as-uid`, `as-groups`, `as-user-extra`).
 */
export class KubeCredentials {
  readonly cluster: KubeCluster;
  readonly #user: KubeUser | null;
  #exec: { status: ExecCredentialStatus; until: number } | undefined;
  #provider: Promise<ClientNodeKubeConfig> | undefined;

  constructor(kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.cluster = cluster;
    this.#user = kc.getCurrentUser();
  }

  async #execStatus(): Promise<ExecCredentialStatus | undefined> {
    const exec = this.#user?.exec;
    if (!exec) return undefined;
    if (this.#exec && this.#exec.until > Date.now()) return this.#exec.status;
    const status = await runExecPlugin(exec, this.cluster);
    // Without an expiry the plugin runs again on a refresh after this (the transport's, every 30 s).
    const until = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Number.NaN;
    this.#exec = { status, until: Number.isNaN(until) ? Date.now() + UNEXPIRING_EXEC_MS : until };
    return status;
  }

  /** TLS options for the agent; plain HTTP only when the cluster turns TLS checks off. */
  async tls(): Promise<TlsOptions> {
    if (this.cluster.server.startsWith('http:') && !this.cluster.skipTLSVerify) {
      // client-node's wording, which the CLI and the fuzz suite recognise.
      throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
    }
    const user = this.#user;
    const exec = await this.#execStatus();
    const tls: TlsOptions = {};
    const ca = fileOrData(this.cluster.caFile, this.cluster.caData);
    if (ca) tls.ca = ca;
    const cert = fileOrData(user?.certFile, user?.certData) ?? exec?.clientCertificateData;
    if (cert) tls.cert = cert;
    const key = fileOrData(user?.keyFile, user?.keyData) ?? exec?.clientKeyData;
    if (key) tls.key = key;
    if (this.cluster.tlsServerName) tls.servername = this.cluster.tlsServerName;
    if (this.cluster.skipTLSVerify) tls.rejectUnauthorized = false;
    return tls;
  }

  /** Authorization and Impersonate-* headers for the next requests. */
  async headers(): Promise<Record<string, string | string[]>> {
    const user = this.#user;
    const headers: Record<string, string | string[]> = {};
    if (!user) return headers;
    const bearer =
      user.token ??
      (user.tokenFile ? readFileSync(user.tokenFile, 'utf8').trim() : undefined) ??
      (await this.#execStatus())?.token ??
      (user.authProvider ? await this.#providerAuthorization(user) : undefined);
    if (user.username) {
      headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    } else if (bearer) headers.Authorization = bearer.startsWith('Bearer ') ? bearer : `Bearer ${bearer}`;
    if (user.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
    if (user.impersonateUid) headers['Impersonate-Uid'] = user.impersonateUid;
    if (user.impersonateGroups?.length) headers['Impersonate-Group'] = user.impersonateGroups;
    for (const [k, v] of Object.entries(user.impersonateUserExtra ?? {}))
      headers[`Impersonate-Extra-${encodeURIComponent(k)}`] = v;
    return headers;
  }

  /** An auth provider's header, from @kubernetes/client-node (loaded for this alone), which refreshes its tokens. */
  async #providerAuthorization(user: KubeUser): Promise<string | undefined> {
    this.#provider ??= loadClientNode().then(({ KubeConfig }) => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          { name: 'c', server: this.cluster.server, skipTLSVerify: this.cluster.skipTLSVerify === true },
        ],
        users: [{ name: 'u', authProvider: user.authProvider }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      return kc;
    });
    const opts: { headers?: Record<string, unknown> } = {};
    await (await this.#provider).applyToHTTPSOptions(opts);
    const value = opts.headers?.Authorization;
    return typeof value === 'string' ? value : undefined;
  }
}
