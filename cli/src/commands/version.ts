import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeClient } from '@mooring/runtime';
import type { Command } from 'commander';
import { CLI_DIR } from '../cli-paths.ts';
import { type Session, sessionOf } from '../session.ts';

/** The CLI's version, from its package.json. */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(join(CLI_DIR, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** The image tag (or digest) a container runs, which is the operator's version. */
function imageVersion(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1);
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? image.slice(colon + 1) : 'latest';
}

/**
 * The line `version` ends with when no cluster answered: which server, and why in plain words.
 * Anything else (the server answered and refused) is left as it is.
 */
async function unreachable(session: Session, err: unknown): Promise<unknown> {
  const { CliError, connectionProblem } = await import('../cli-error.ts');
  const problem = connectionProblem(err);
  if (problem) {
    const server = await session.server();
    return new CliError(
      `no cluster reached${server ? ` at ${server}` : ''}: ${problem}; check --kubeconfig and --context, or start a cluster.`,
    );
  }
  // The kubeconfig is missing, unreadable or unusable: no request was sent.
  if (err instanceof CliError) return new CliError(`no cluster reached: ${err.message}`, err.exitCode);
  return err;
}

/**
 * `mooring version`: the CLI's version, then each installed operator's (its image tag), as
 * `flux version` does; `--client` skips the cluster.
 */
export function registerVersion(program: Command): void {
  program
    .command('version')
    .description(
      "print the version of the mooring CLI and of the operators in the cluster (--client: the CLI's only)",
    )
    .option('--client', 'only the CLI version; do not contact the cluster')
    .action(async (flags: { client?: boolean }, cmd: Command) => {
      process.stdout.write(`mooring: v${cliVersion()}\n`);
      if (flags.client) return;
      const session = sessionOf(cmd);
      // The operators live in mooring-system whatever the context's namespace; -n overrides.
      const namespace = session.options.namespace ?? 'mooring-system';
      try {
        await session.use(async (client) => operatorVersions(client, namespace));
      } catch (err) {
        throw await unreachable(session, err);
      }
    });
}

/** Each operator Deployment's image tag in `namespace`, one line each, or a note that there are none. */
async function operatorVersions(client: KubeClient, namespace: string): Promise<void> {
  const { OPERATOR_DEPLOYMENTS } = await import('../install-manifests.ts');
  let found = 0;
  for (const name of OPERATOR_DEPLOYMENTS) {
    const dep = await client.getOrUndefined({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace,
      name,
    });
    const image = (dep?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)
      ?.template?.spec?.containers?.[0]?.image;
    if (!image) continue;
    found++;
    process.stdout.write(`${name}: ${imageVersion(image)}\n`);
  }
  if (found === 0)
    process.stderr.write(`no Mooring operators in ${namespace}: install them with 'mooring install'\n`);
}
