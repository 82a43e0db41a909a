import { type Command, Option } from 'commander';
import { sessionOf } from '../session.ts';

interface PlanFlags {
  base: string;
  head: string;
  repo: string;
  path?: string[];
  source?: string[];
  output: 'text' | 'markdown' | 'json';
  post?: 'github' | 'gitlab' | 'gitea';
  pr?: string;
  repoUrl?: string;
  statusContext?: string;
  statusSha?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * `mooring plan --base <ref> --head <ref>`: what merging would change, per Kustomization and
 * HelmRelease, rendered offline at both revisions. Exit 0 no changes, 2 changes, 1 an error (a
 * render failed, or the plan could not be made), as terraform's -detailed-exitcode.
 */
export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description(
      'render every Kustomization and HelmRelease a change reaches at both Git revisions, offline, and report the objects added, changed and deleted (exit 0 none, 2 changes, 1 error)',
    )
    .requiredOption('--base <ref>', 'the revision the change is compared against (the target branch)')
    .option('--head <ref>', 'the revision with the change', 'HEAD')
    .option('--repo <dir>', 'the local Git repository', '.')
    .option('--path <dir>', 'plan only what is declared in files under this folder (repeatable)', collect)
    .option(
      '--source <namespace/name>',
      'a GitRepository that fetches this repository (repeatable; default: those whose URL is a remote of it)',
      collect,
    )
    .addOption(
      new Option('--output <format>', 'text, markdown (a pull-request comment) or json')
        .choices(['text', 'markdown', 'json'])
        .default('text'),
    )
    .addOption(
      new Option('--post <host>', 'post the Markdown plan to the pull request and a commit status').choices([
        'github',
        'gitlab',
        'gitea',
      ]),
    )
    .option('--pr <number>', 'the pull (merge) request to comment on, with --post')
    .option(
      '--repo-url <url>',
      "the repository's address on the host, with --post (default: the origin remote)",
    )
    .option('--status-context <name>', 'the commit status name, with --post', 'mooring/plan')
    .option(
      '--status-sha <sha>',
      "the commit to set the status on, with --post (default the head's; pass the pull request's head when --head is a merge preview)",
    )
    .addHelpText(
      'after',
      '\nWith --kubeconfig, substituteFrom variables and decryption keys are read from the cluster and the head render is diffed against it by server-side dry run.\n--post reads the token from $MOORING_GIT_TOKEN.',
    )
    .action(async (opts: PlanFlags, cmd: Command) => {
      const { CliError, describeError, EXIT_FAILURE } = await import('../cli-error.ts');
      try {
        await runPlan(opts, cmd);
      } catch (err) {
        // Exit 2 means "changes": every failure must leave with 1.
        throw new CliError(describeError(err).replace(/\.$/, ''), EXIT_FAILURE);
      }
    });
}

async function runPlan(opts: PlanFlags, cmd: Command): Promise<void> {
  const { CliError } = await import('../cli-error.ts');
  const { makePlan, planExitCode } = await import('../plan/make-plan.ts');
  const { planAsMarkdown } = await import('../plan/format-markdown.ts');
  const { planAsText } = await import('../plan/format-text.ts');
  const { TOKEN_ENV, postPlan } = await import('../plan/post-plan.ts');
  let pr: number | undefined;
  if (opts.post) {
    pr = Number(opts.pr);
    if (!opts.pr || !Number.isInteger(pr) || pr <= 0)
      throw new CliError(`--post ${opts.post} needs --pr <number>, the pull request to comment on.`);
    if (!process.env[TOKEN_ENV])
      throw new CliError(
        `--post ${opts.post} needs a token in $${TOKEN_ENV} that may comment and set statuses.`,
      );
  } else if (opts.pr) throw new CliError('--pr is used with --post github|gitlab|gitea.');
  for (const s of opts.source ?? [])
    if (!/^[^/\s]+\/[^/\s]+$/.test(s)) throw new CliError(`--source ${s} is not <namespace>/<name>.`);

  const options = {
    repo: opts.repo,
    base: opts.base,
    head: opts.head,
    paths: opts.path ?? [],
    sources: opts.source ?? [],
  };
  // Only an explicit --kubeconfig reaches a cluster: $KUBECONFIG alone keeps the plan offline.
  const plan = cmd.optsWithGlobals<{ kubeconfig?: string }>().kubeconfig
    ? await sessionOf(cmd).use(async (client) => {
        const { clusterAccess } = await import('../plan/live-plan.ts');
        return makePlan({ ...options, cluster: clusterAccess(client) });
      })
    : await makePlan(options);

  const markdown = opts.output === 'markdown' || opts.post ? planAsMarkdown(plan) : '';
  if (opts.output === 'json')
    process.stdout.write(`${JSON.stringify({ ...plan, exitCode: planExitCode(plan) }, null, 2)}\n`);
  else process.stdout.write(opts.output === 'markdown' ? markdown : planAsText(plan));

  if (opts.post && pr) {
    const { git } = await import('../plan/git-revisions.ts');
    const repoUrl =
      opts.repoUrl ??
      (await git(opts.repo, ['remote', 'get-url', 'origin']).catch(() => {
        throw new CliError(
          'the repository has no origin remote: pass --repo-url https://<host>/<owner>/<repo>.',
        );
      }));
    await postPlan(plan, markdown, {
      host: opts.post,
      pr,
      repoUrl: repoUrl.trim(),
      token: process.env[TOKEN_ENV]!,
      context: opts.statusContext ?? 'mooring/plan',
      statusSha: opts.statusSha ?? plan.head.sha,
    });
    process.stderr.write(
      `✔ posted the plan to pull request #${pr} and set ${opts.statusContext} on ${(opts.statusSha ?? plan.head.sha).slice(0, 12)}\n`,
    );
  }
  process.exitCode = planExitCode(plan);
}
