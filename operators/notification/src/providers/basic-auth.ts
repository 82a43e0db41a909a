import type { ProviderConfig } from './types.ts';

/** `Authorization: Basic` from the secret's username/password, when both are set. */
export function basicAuth(p: ProviderConfig): Record<string, string> {
  if (!p.basicAuth) return {};
  const { username, password } = p.basicAuth;
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
}
