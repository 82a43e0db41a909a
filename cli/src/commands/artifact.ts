import { type Command, Option } from 'commander';
import type { DiffFlags } from '../oci-diff.ts';
import type { ListFlags } from '../oci-list.ts';
import type { PullFlags } from '../oci-pull.ts';
import type { PushFlags } from '../oci-push.ts';
import type { TagFlags } from '../oci-tag.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Adds the registry flags every artifact command takes. */
function withRegistryFlags(cmd: Command): Command {
  return cmd
    .option(
      '--creds <user:password>',
      'registry credentials (default $MOORING_OCI_CREDS, then the docker config of the registry host)',
    )
    .option('--insecure-registry', 'talk to the registry over plain HTTP');
}

/** Writes a line on stderr: progress and notes, so stdout stays for results. */
const note = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/**
 * `push artifact`, `pull artifact`, `tag artifact` and `list artifacts`: Flux's OCI artifact workflow,
 * so a folder of manifests can be published for an OCIRepository to deliver.
 */
export function registerArtifacts(program: Command): void {
  withRegistryFlags(
    program
      .command('push')
      .description('push an artifact to an OCI registry')
      .command('artifact')
      .description('pack a folder of manifests and push it as an OCI artifact, as Flux does')
      .argument('<url>', 'where to push, e.g. oci://ghcr.io/org/app:v1')
      .requiredOption('--path <dir|file>', 'folder (or single file) to pack')
      .requiredOption('--source <url>', 'where the content comes from, e.g. the Git remote URL')
      .requiredOption('--revision <rev>', 'the source revision, e.g. main@sha1:<commit>')
      .option('-a, --annotations <key=value>', 'extra manifest annotation (repeatable)', collect)
      .option(
        '--ignore-paths <patterns>',
        '.gitignore-style paths to leave out, comma-separated (replaces the default: .git/, images, archives)',
        collect,
      )
      .option(
        '--reproducible',
        'set the created annotation to 1970-01-01, so any tag of a tree shares one digest',
      )
      .addOption(new Option('-o, --output <format>', 'print the result as JSON on stdout').choices(['json'])),
  ).action(async (url: string, flags: PushFlags) => {
    const { pushArtifact } = await import('../oci-push.ts');
    await pushArtifact(url, flags, note);
  });

  // `diff` already holds `diff kustomization`; the artifact form joins it.
  const diff = program.commands.find((c) => c.name() === 'diff') ?? program.command('diff');
  withRegistryFlags(
    diff
      .command('artifact')
      .description('compare a local folder with a pushed artifact: exit 0 same, 1 different, 2 error')
      .argument('<url>', 'the artifact: oci://host/repo:tag or oci://host/repo@sha256:<digest>')
      .requiredOption('--path <dir|file>', 'the folder (or file) that would be pushed')
      .option(
        '--ignore-paths <patterns>',
        'as for push artifact: .gitignore-style paths to leave out, comma-separated',
        collect,
      ),
  ).action(async (url: string, flags: DiffFlags) => {
    const { CliError, describeError, EXIT_ERROR } = await import('../cli-error.ts');
    const { diffArtifact } = await import('../oci-diff.ts');
    try {
      await diffArtifact(url, flags, note);
    } catch (err) {
      // Errors must not look like a difference to scripts: they exit above 1.
      if (err instanceof CliError && err.exitCode > 1) throw err;
      throw new CliError(describeError(err).replace(/\.$/, ''), EXIT_ERROR);
    }
  });

  withRegistryFlags(
    program
      .command('pull')
      .description('pull an artifact from an OCI registry')
      .command('artifact')
      .description('download an OCI artifact, verify it and extract its content')
      .argument('<url>', 'what to pull: oci://host/repo:tag or oci://host/repo@sha256:<digest>')
      .requiredOption('-o, --output <dir>', 'new or empty folder to extract into'),
  ).action(async (url: string, flags: PullFlags) => {
    const { pullArtifact } = await import('../oci-pull.ts');
    await pullArtifact(url, flags, note);
  });

  withRegistryFlags(
    program
      .command('tag')
      .description('tag an artifact in an OCI registry')
      .command('artifact')
      .description('give an OCI artifact another tag (the manifest is copied, no blob is uploaded)')
      .argument('<url>', 'the artifact to tag: oci://host/repo:tag or oci://host/repo@sha256:<digest>')
      .requiredOption('--tag <tag>', 'the new tag (repeatable)', collect),
  ).action(async (url: string, flags: TagFlags) => {
    const { tagArtifact } = await import('../oci-tag.ts');
    await tagArtifact(url, flags, note);
  });

  withRegistryFlags(
    program
      .command('list')
      .description('list artifacts in an OCI registry')
      .command('artifacts')
      .description('list the tags of an OCI repository with their digest, source and revision')
      .argument('<url>', 'the repository, e.g. oci://ghcr.io/org/app')
      .addOption(new Option('-o, --output <format>', 'print the list as JSON').choices(['json'])),
  ).action(async (url: string, flags: ListFlags) => {
    const { listArtifacts } = await import('../oci-list.ts');
    await listArtifacts(url, flags);
  });
}
