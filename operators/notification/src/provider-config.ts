import type { Provider, Reason } from '@mooring/api';
import { type KubeClient, parseDuration } from '@mooring/runtime';
import { parse as parseYaml } from 'yaml';
import { CHANNEL_TYPES, DEFAULT_ADDRESS_TYPES, PAYLOAD_BUILDERS, TOKEN_TYPES } from './providers/index.ts';
import type { ProviderConfig } from './providers/types.ts';
import { readSecret, SecretError } from './secrets.ts';

/** Flux's default per-send timeout. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 15_000;

/** A Provider that cannot send; `reason` is the Ready condition's, the message free of secrets. */
export class ProviderConfigError extends Error {
  readonly reason: Reason;
  /** True when only a spec change can fix it (as opposed to a Secret appearing later). */
  readonly stalled: boolean;
  constructor(reason: Reason, message: string, stalled: boolean) {
    super(message);
    this.name = 'ProviderConfigError';
    this.reason = reason;
    this.stalled = stalled;
  }
}

function httpUrl(text: string, what: string, ref: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProviderConfigError(
      'InvalidAddress',
      `${ref}: ${what} is not a valid URL`,
      what === 'spec.address',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ssh:')
    throw new ProviderConfigError(
      'InvalidAddress',
      `${ref}: ${what} must be an http or https URL`,
      what === 'spec.address',
    );
  return text;
}

/**
 * Resolves a Provider and its Secrets into what a send needs, checking every field a send relies
 * on; throws a ProviderConfigError saying which one is wrong.
 */
export async function resolveProvider(
  client: Pick<KubeClient, 'get'>,
  provider: Provider,
): Promise<ProviderConfig> {
  const ns = provider.metadata.namespace ?? '';
  const name = provider.metadata.name ?? '';
  const ref = `Provider ${ns}/${name}`;
  const spec = provider.spec;
  if (!PAYLOAD_BUILDERS[spec.type])
    throw new ProviderConfigError(
      'UnsupportedType',
      `${ref}: type ${spec.type} is not supported by Mooring yet`,
      true,
    );
  let timeoutMs = DEFAULT_PROVIDER_TIMEOUT_MS;
  if (spec.timeout) {
    try {
      timeoutMs = parseDuration(spec.timeout);
    } catch {
      throw new ProviderConfigError(
        'InvalidTimeout',
        `${ref}: spec.timeout ${JSON.stringify(spec.timeout)} is not a duration`,
        true,
      );
    }
  }
  const read = async (secretName: string) => {
    try {
      return await readSecret(client, ns, secretName);
    } catch (err) {
      if (err instanceof SecretError)
        throw new ProviderConfigError(err.reason, `${ref}: ${err.message}`, false);
      throw err;
    }
  };
  const secret = spec.secretRef ? await read(spec.secretRef.name) : {};
  let address = spec.address ?? '';
  if (secret.address) address = httpUrl(secret.address.trim(), 'the secret’s address', ref);
  else if (address) httpUrl(address, 'spec.address', ref);
  else if (!DEFAULT_ADDRESS_TYPES.has(spec.type))
    throw new ProviderConfigError(
      'InvalidAddress',
      `${ref}: no address in spec.address or the secret`,
      !spec.secretRef,
    );
  if (TOKEN_TYPES.has(spec.type) && !secret.token)
    throw new ProviderConfigError(
      'TokenNotFound',
      `${ref}: type ${spec.type} needs a 'token' key in its secretRef`,
      !spec.secretRef,
    );
  if (CHANNEL_TYPES.has(spec.type) && !spec.channel)
    throw new ProviderConfigError('InvalidChannel', `${ref}: type ${spec.type} needs spec.channel`, true);
  let headers: Record<string, string> = {};
  if (secret.headers) {
    let parsed: unknown;
    try {
      parsed = parseYaml(secret.headers);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new ProviderConfigError(
        'InvalidHeaders',
        `${ref}: the secret’s 'headers' is not a YAML map`,
        false,
      );
    headers = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k.toLowerCase(), String(v)]));
  }
  const config: ProviderConfig = {
    type: spec.type,
    name,
    namespace: ns,
    uid: provider.metadata.uid ?? '',
    address,
    channel: spec.channel,
    username: spec.username,
    token: secret.token?.trim() || undefined,
    headers,
    timeoutMs,
  };
  if (secret.username && secret.password)
    config.basicAuth = { username: secret.username, password: secret.password };
  if (spec.certSecretRef) {
    const tls = await read(spec.certSecretRef.name);
    if (!tls['ca.crt'] && !tls['tls.crt'])
      throw new ProviderConfigError(
        'InvalidCertSecret',
        `${ref}: certSecretRef has neither ca.crt nor tls.crt`,
        false,
      );
    config.tls = { ca: tls['ca.crt'], cert: tls['tls.crt'], key: tls['tls.key'] };
  } else if (secret['ca.crt']) {
    config.tls = { ca: secret['ca.crt'] };
  }
  if (spec.proxySecretRef) {
    const proxy = await read(spec.proxySecretRef.name);
    if (!proxy.address)
      throw new ProviderConfigError('InvalidProxy', `${ref}: proxySecretRef has no address`, false);
    const url = new URL(httpUrl(proxy.address, 'the proxy address', ref));
    if (proxy.username) url.username = encodeURIComponent(proxy.username);
    if (proxy.password) url.password = encodeURIComponent(proxy.password);
    config.proxy = url.href;
  } else if (spec.proxy || secret.proxy) {
    config.proxy = httpUrl(spec.proxy ?? secret.proxy ?? '', 'the proxy address', ref);
  }
  return config;
}
