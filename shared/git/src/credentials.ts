import type { GitAuth } from './git-client.ts';

/** A credentials Secret that cannot work for its URL; the message names the Secret and the missing key. */
export class InvalidGitCredentialsError extends Error {
  override name = 'InvalidGitCredentialsError';
}

/**
 * Git credentials from a Secret's decoded values, with Flux's keys: `username`/`password` or
 * `bearerToken` for HTTP(S), `identity` + `known_hosts` for SSH, `ca.crt` for a private CA.
 */
export function gitAuthFromSecret(data: Record<string, string>, url: string, secretName: string): GitAuth {
  const auth: GitAuth = {};
  if (data.username !== undefined) auth.username = data.username;
  if (data.password !== undefined) auth.password = data.password;
  if (data.bearerToken !== undefined) auth.bearerToken = data.bearerToken;
  if (data['ca.crt'] !== undefined) auth.caCert = data['ca.crt'];
  if (data.identity !== undefined) auth.sshIdentity = data.identity;
  if (data.known_hosts !== undefined) auth.sshKnownHosts = data.known_hosts;
  if (url.startsWith('ssh://')) {
    if (!auth.sshIdentity)
      throw new InvalidGitCredentialsError(`Secret ${secretName} has no 'identity' key for SSH`);
    // Strict host-key checking needs the host's key: without it every connection would fail anyway.
    if (!auth.sshKnownHosts) {
      throw new InvalidGitCredentialsError(`Secret ${secretName} has no 'known_hosts' key for SSH`);
    }
  } else if (auth.bearerToken !== undefined && auth.password !== undefined) {
    throw new InvalidGitCredentialsError(
      `Secret ${secretName} has both 'bearerToken' and 'password': keep one`,
    );
  }
  return auth;
}
