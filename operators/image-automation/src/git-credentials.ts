import type { GitAuth } from '@mooring/git';
import { StalledError } from '@mooring/runtime';

/**
 * Git credentials from a GitRepository's Secret, with Flux's keys: `username`/`password` or
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
  if (url.startsWith('ssh://') && (!auth.sshIdentity || !auth.sshKnownHosts)) {
    throw new StalledError(
      'InvalidSourceConfiguration',
      `Secret ${secretName} needs 'identity' and 'known_hosts' keys for SSH`,
    );
  }
  return auth;
}
