import type { KubeClient } from '@mooring/runtime';
import type { Command } from 'commander';
import { CliError, EXIT_ERROR } from '../cli-error.ts';
import { sessionOf } from '../session.ts';

interface BootstrapFlags {
  url: string;
  branch: string;
  path: string;
  username?: string;
  password?: string;
  privateKeyFile?: string;
  knownHostsFile?: string;
  yes?: boolean;
  version?: string;
  registry?: string;
  imagePullSecret?: string;
  authorName: string;
  authorEmail: string;
  skipInstall?: boolean;
  timeout: string;
}

/** `mooring bootstrap git`: Mooring's own manifests into Git, installed, then managing itself. */
export function registerBootstrap(program: Command): void {
  const bootstrap = program.command('bootstrap').description('put Mooring under GitOps management');
  bootstrap
    .command('git')
    .description(
      'push the install manifests and a self-pointing GitRepository + Kustomization, install, wait',
    )
    .requiredOption('--url <url>', 'Git repository URL: https://… or ssh://git@host[:port]/path')
    .option('--branch <branch>', 'branch to commit to', 'main')
    .requiredOption('--path <path>', "the cluster's folder in the repository, e.g. clusters/prod")
    .option('--username <name>', 'HTTP user (the password comes from --password or $MOORING_GIT_PASSWORD)')
    .option('--password <password>', 'HTTP password or token; over SSH, the passphrase of --private-key-file')
    .option(
      '--private-key-file <file>',
      'SSH private key (PEM or OpenSSH) with write access (default: the one bootstrap stored in the cluster, else a new one)',
    )
    .option('--known-hosts-file <file>', "the SSH host's known_hosts (default: scan it with ssh-keyscan)")
    .option('-y, --yes', 'do not wait for confirmation that a generated key was added as a deploy key')
    .option('--version <tag>', 'operator image tag (default: this CLI version)')
    .option(
      '--registry <host/path>',
      'pull the operator image from this registry (a mirror or private registry)',
    )
    .option('--image-pull-secret <name>', 'an existing docker-registry Secret in mooring-system to pull with')
    .option('--author-name <name>', 'commit author', 'mooring')
    .option('--author-email <email>', 'commit author email', 'mooring@localhost')
    .option('--skip-install', 'only push to Git; do not touch the cluster')
    .option('--timeout <duration>', 'how long to wait for Mooring to manage itself', '5m')
    .action(async (flags: BootstrapFlags, cmd: Command) => {
      const { pushManifests, syncObjects } = await import('../bootstrap-repo.ts');
      const { installManifests } = await import('../install-manifests.ts');
      const { objectsToYAML } = await import('../render-local.ts');
      const { cliVersion } = await import('./version.ts');
      const { prepareSshAccess, sshRemoteOf } = await import('../bootstrap-ssh.ts');
      const password = flags.password ?? process.env.MOORING_GIT_PASSWORD;
      const remote = sshRemoteOf(flags.url);
      checkTransportFlags(flags, remote !== undefined);
      const ssh = remote
        ? await prepareSshAccess({
            url: flags.url,
            remote,
            privateKeyFile: flags.privateKeyFile,
            passphrase: password,
            knownHostsFile: flags.knownHostsFile,
            existingIdentity:
              flags.privateKeyFile || flags.skipInstall
                ? undefined
                : await sessionOf(cmd).use((client) => identityInCluster(client)),
            yes: flags.yes,
          })
        : undefined;
      const target = {
        url: flags.url,
        branch: flags.branch,
        path: flags.path,
        auth: !ssh && flags.username && password ? { username: flags.username, password } : undefined,
        ssh,
        secretName: ssh || flags.username ? 'mooring-system' : undefined,
        author: { name: flags.authorName, email: flags.authorEmail },
      };
      const { imageSource } = await import('../image-source.ts');
      const objects = await installManifests(
        flags.version ?? `v${cliVersion()}`,
        undefined,
        imageSource(flags.registry, flags.imagePullSecret),
      );
      process.stderr.write(
        `► pushing manifests to ${flags.url} ${flags.branch}:${flags.path}/mooring-system\n`,
      );
      const commit = await pushManifests(target, objectsToYAML(objects));
      process.stdout.write(commit ? `✔ pushed commit ${commit}\n` : '✔ the repository is up to date\n');
      if (flags.skipInstall) return;
      const { applyInstall } = await import('../install-apply.ts');
      const { CLI_FIELD_MANAGER } = await import('../session.ts');
      const { kindDefinition, SOURCE_API_VERSION } = await import('@mooring/api');
      const { parseDuration } = await import('@mooring/runtime');
      const { reconcileAndWait } = await import('../wait-reconcile.ts');
      const { OPERATOR_DEPLOYMENTS } = await import('../install-manifests.ts');
      const { waitForDeployments } = await import('../wait-deployments.ts');
      const timeoutMs = parseDuration(flags.timeout);
      await sessionOf(cmd).use(async (client) => {
        // On a rerun Mooring already manages itself: its source takes the new commit first, so a
        // drift pass woken by the install below applies these same manifests, not the old ones.
        const selfSource = { apiVersion: SOURCE_API_VERSION, kind: 'GitRepository' };
        if (
          await client.getOrUndefined({ ...selfSource, namespace: 'mooring-system', name: 'mooring-system' })
        ) {
          const fetched = await reconcileAndWait(
            client,
            kindDefinition('GitRepository'),
            'mooring-system',
            'mooring-system',
            timeoutMs,
          );
          if (!fetched.ready)
            throw new Error(`the GitRepository mooring-system is not ready: ${fetched.message}`);
        }
        await applyInstall(client, objects);
        // The sync objects only mean something once operators run to act on them.
        await waitForDeployments(client, 'mooring-system', OPERATOR_DEPLOYMENTS, timeoutMs);
        // Flux's keys, as shared/git's gitAuthFromSecret reads them.
        const credentials = target.ssh
          ? {
              identity: target.ssh.identity,
              'identity.pub': `${target.ssh.publicKey}\n`,
              known_hosts: target.ssh.knownHosts,
            }
          : target.auth
            ? { username: target.auth.username, password: target.auth.password }
            : undefined;
        if (credentials)
          await client.apply(
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'mooring-system', namespace: 'mooring-system' },
              stringData: credentials,
            },
            { fieldManager: CLI_FIELD_MANAGER, force: true },
          );
        for (const obj of syncObjects(target))
          await client.apply(obj, { fieldManager: CLI_FIELD_MANAGER, force: true });
        process.stderr.write('◎ waiting for Mooring to reconcile itself from Git\n');
        const source = await reconcileAndWait(
          client,
          kindDefinition('GitRepository'),
          'mooring-system',
          'mooring-system',
          timeoutMs,
        );
        if (!source.ready)
          throw new Error(`the GitRepository mooring-system is not ready: ${source.message}`);
        const ks = await reconcileAndWait(
          client,
          kindDefinition('Kustomization'),
          'mooring-system',
          'mooring-system',
          timeoutMs,
        );
        if (!ks.ready) throw new Error(`the Kustomization mooring-system is not ready: ${ks.message}`);
        process.stdout.write(`✔ Mooring manages itself from ${flags.url} at ${ks.revision}\n`);
      });
    });
}

/** Flags that belong to the other transport are usage errors, not silently ignored. */
function checkTransportFlags(flags: BootstrapFlags, overSsh: boolean): void {
  if (overSsh && flags.username)
    throw new CliError(
      '--username is for HTTPS: over SSH the user is part of the URL (ssh://git@host/path).',
      EXIT_ERROR,
    );
  if (!overSsh && (flags.privateKeyFile || flags.knownHostsFile))
    throw new CliError(
      '--private-key-file and --known-hosts-file are for SSH: use an ssh://git@host/path URL.',
      EXIT_ERROR,
    );
}

/** The SSH key a previous bootstrap stored, so a rerun keeps the deploy key the user already added. */
async function identityInCluster(client: KubeClient): Promise<string | undefined> {
  const secret = await client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: 'mooring-system',
    name: 'mooring-system',
  });
  const identity = (secret?.data as Record<string, string> | undefined)?.identity;
  return identity ? Buffer.from(identity, 'base64').toString('utf8') : undefined;
}
