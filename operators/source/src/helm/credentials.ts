import type { HelmRepository } from '@mooring/api';
import { Reason } from '@mooring/api';
import { type KubeClient, readSecretData, StalledError } from '@mooring/runtime';
import type { HelmAuth, HelmTls } from './http-get.ts';

/** A HelmRepository's credentials, with the Secret they came from (for messages). */
export interface HelmCredentials {
  auth?: HelmAuth;
  tls?: HelmTls;
  /** `<namespace>/<name>` of `spec.secretRef`, when set. */
  secret?: string;
}

/**
 * `spec.secretRef` (username and password, or bearerToken; for type oci a .dockerconfigjson
 * works too) and `spec.certSecretRef` (ca.crt, tls.crt with tls.key). A Secret of the wrong shape
 * stalls: retrying cannot fix it, editing the Secret requeues through the watch.
 */
export async function readHelmCredentials(
  client: KubeClient,
  namespace: string,
  spec: HelmRepository['spec'],
): Promise<HelmCredentials> {
  const out: HelmCredentials = {};
  const name = spec.secretRef?.name;
  if (name) {
    out.secret = `${namespace}/${name}`;
    const data = await readSecretData(client, namespace, name, 'authentication');
    if (data.bearerToken) out.auth = { bearerToken: data.bearerToken };
    else if (data.username !== undefined || data.password !== undefined) {
      if (!data.username || !data.password) {
        throw new StalledError(
          Reason.InvalidSecret,
          `Secret ${out.secret} must hold both 'username' and 'password'`,
        );
      }
      out.auth = { basic: { username: data.username, password: data.password } };
    } else if (!(spec.type === 'oci' && data['.dockerconfigjson'] !== undefined)) {
      throw new StalledError(
        Reason.InvalidSecret,
        `Secret ${out.secret} has neither 'username' and 'password' nor 'bearerToken'${
          spec.type === 'oci' ? " nor '.dockerconfigjson'" : ''
        }`,
      );
    }
  }
  const certName = spec.certSecretRef?.name;
  if (certName) {
    const data = await readSecretData(client, namespace, certName, 'TLS');
    if (!data['ca.crt'] && !data['tls.crt']) {
      throw new StalledError(
        Reason.InvalidCertSecret,
        `Secret ${namespace}/${certName} has neither 'ca.crt' nor 'tls.crt'`,
      );
    }
    if (data['tls.crt'] && !data['tls.key']) {
      throw new StalledError(
        Reason.InvalidCertSecret,
        `Secret ${namespace}/${certName} has 'tls.crt' without 'tls.key'`,
      );
    }
    out.tls = { caCert: data['ca.crt'], clientCert: data['tls.crt'], clientKey: data['tls.key'] };
  }
  return out;
}

/** The index's URL: `<spec.url>/index.yaml`, the URL's path kept (a trailing slash or not). */
export function indexUrlOf(repoUrl: URL): URL {
  const base = new URL(repoUrl.href);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('index.yaml', base);
}

/**
 * Where a chart version is downloaded: its URL as the index gives it, a relative one resolved
 * against the repository URL (as Helm does), and whether the repository's credentials go along:
 * only to the repository's own host, or anywhere with `passCredentials`.
 */
export function chartDownload(
  repoUrl: URL,
  entryUrl: string,
  passCredentials: boolean,
): { url: URL; withCredentials: boolean } {
  const base = new URL(repoUrl.href);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const url = new URL(entryUrl, base);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`chart URL ${url.protocol}//… is not http(s)`);
  }
  return { url, withCredentials: passCredentials || url.host === repoUrl.host };
}
