import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  credentialsFromDockerConfig,
  type OciReference,
  RegistryAuthError,
  RegistryClient,
  type RegistryCredentials,
  RegistryError,
  RegistryNotFoundError,
} from '@mooring/oci';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { display } from './oci-artifact-ref.ts';

/** The flags every artifact command shares for reaching a registry. */
export interface RegistryFlags {
  creds?: string;
  insecureRegistry?: boolean;
}

/** The environment variable read when `--creds` is not given. */
export const CREDS_ENV = 'MOORING_OCI_CREDS';

// Flux's default --timeout; RegistryClient applies it to each whole operation.
const OPERATION_TIMEOUT_MS = 5 * 60_000;

/** `~/.docker/config.json`, or `$DOCKER_CONFIG/config.json` as docker itself reads it. */
export function dockerConfigPath(): string {
  const dir = process.env.DOCKER_CONFIG || join(homedir(), '.docker');
  return join(dir, 'config.json');
}

/** `user:password` from a flag or the environment; the value is never quoted back. */
function parseCreds(value: string, from: string): RegistryCredentials {
  const colon = value.indexOf(':');
  if (colon < 1)
    throw new CliError(`${from} is not user:password: write it as ${from}=<user>:<password>.`, EXIT_ERROR);
  return { username: value.slice(0, colon), password: value.slice(colon + 1) };
}

/** Credentials for `host`: `--creds`, then MOORING_OCI_CREDS, then the docker config's `auths`; else none. */
export function registryCredentials(
  host: string,
  creds: string | undefined,
): RegistryCredentials | undefined {
  if (creds !== undefined) return parseCreds(creds, '--creds');
  const env = process.env[CREDS_ENV];
  if (env) return parseCreds(env, CREDS_ENV);
  const file = dockerConfigPath();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // no docker config: anonymous access
  }
  try {
    return credentialsFromDockerConfig(text, host);
  } catch (err) {
    // The shared message never quotes the document; it speaks of a Secret's value, so name the file.
    const reason = (err as Error).message.replace(/^the \.dockerconfigjson value/, 'it').replace(/\.$/, '');
    throw new CliError(`cannot use the registry credentials in ${file} (${reason}): fix it or pass --creds.`);
  }
}

/** A registry client for `repo` with the command's credentials and transport flags. */
export function registryClient(repo: OciReference, flags: RegistryFlags): RegistryClient {
  const credentials = registryCredentials(repo.host, flags.creds);
  return new RegistryClient({
    insecure: flags.insecureRegistry === true,
    timeoutMs: OPERATION_TIMEOUT_MS,
    userAgent: 'mooring-cli',
    ...(credentials ? { credentials } : {}),
  });
}

const stop = (message: string): string => message.replace(/\.$/, '');

/**
 * A registry failure as one CLI sentence with the next step. The shared messages speak the
 * OCIRepository's language (insecure: true, certSecretRef); here the flags say it.
 */
export function registryFailure(err: unknown, repo: OciReference): unknown {
  if (!(err instanceof RegistryError)) return err;
  const message = err.message
    .replace(/set insecure: true|without insecure: true/, (m) =>
      m.startsWith('set') ? 'pass --insecure-registry' : 'without --insecure-registry',
    )
    .replace('give its CA certificate in certSecretRef', 'trust its CA with NODE_EXTRA_CA_CERTS=<file>');
  if (err instanceof RegistryAuthError) {
    return new CliError(
      `${stop(message)}: pass --creds <user>:<password>, set ${CREDS_ENV}, or log in with docker login.`,
    );
  }
  if (err instanceof RegistryNotFoundError) {
    return new CliError(
      `${stop(message)}: check the address; 'mooring list artifacts ${display(repo)}' shows the tags.`,
    );
  }
  return new CliError(message);
}
