import { Command, CommanderError, Option } from 'commander';
import { CliError, describeError, EXIT_ERROR, EXIT_FAILURE } from './cli-error.ts';
import { registerApprove } from './commands/approve.ts';
import { registerArtifacts } from './commands/artifact.ts';
import { registerBootstrap } from './commands/bootstrap.ts';
import { registerBuild } from './commands/build.ts';
import { registerCompletion } from './commands/completion.ts';
import { registerCreate } from './commands/create.ts';
import { registerDiff } from './commands/diff.ts';
import { registerEnvsubst } from './commands/envsubst.ts';
import { registerGet } from './commands/get.ts';
import { registerHistory } from './commands/history.ts';
import { registerImportFlux } from './commands/import-flux.ts';
import { registerInstall } from './commands/install.ts';
import { registerLogs } from './commands/logs.ts';
import { registerObjectCommands } from './commands/objects.ts';
import { registerPlan } from './commands/plan.ts';
import { registerReconcile } from './commands/reconcile.ts';
import { registerRollback } from './commands/rollback.ts';
import { registerTrace } from './commands/trace.ts';
import { registerUi } from './commands/ui.ts';
import { cliVersion, registerVersion } from './commands/version.ts';
import { registerWhy } from './commands/why.ts';

/** The whole command tree; `main.ts` parses argv with it and completion walks it. */
export function buildProgram(): Command {
  const program = new Command('mooring')
    .description('Mooring keeps Kubernetes clusters equal to what Git declares.')
    .addOption(
      new Option('--kubeconfig <file>', 'kubeconfig file (default $KUBECONFIG, then ~/.kube/config)'),
    )
    .addOption(new Option('--context <name>', 'kubeconfig context to use'))
    .addOption(new Option('-n, --namespace <ns>', "namespace (default the context's, else 'default')"))
    .addHelpText(
      'after',
      "\n'mooring --version' prints the CLI's version, as 'mooring version --client' does.",
    )
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: (str, write) => write(str) });
  registerVersion(program);
  registerInstall(program);
  registerBootstrap(program);
  registerCreate(program);
  registerGet(program);
  registerReconcile(program);
  registerLogs(program);
  registerObjectCommands(program);
  registerBuild(program);
  registerDiff(program);
  registerPlan(program);
  registerTrace(program);
  registerWhy(program);
  registerUi(program);
  registerHistory(program);
  registerRollback(program);
  registerApprove(program);
  registerEnvsubst(program);
  registerImportFlux(program);
  registerArtifacts(program);
  registerCompletion(program);
  return program;
}

// Global options that take a value, so their value is not mistaken for a command.
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['--kubeconfig', '--context', '-n', '--namespace']);

/**
 * `mooring --version` or `-v` before any command, as `flux --version`. It is not a commander
 * option: commander reads program options after the command too, and `install --version <tag>`
 * and `bootstrap --version <tag>` are the command's own flags.
 */
function asksForVersion(argv: string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--version' || arg === '-v') return true;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-')) return false;
  }
  return false;
}

/** The command word of `argv` (`plan` in `--kubeconfig k plan --base main`), if any. */
function commandWord(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

// `mooring plan` exits 2 for "changes" (terraform's -detailed-exitcode): its usage errors leave with 1.
const usageExitCode = (argv: string[]): number => (commandWord(argv) === 'plan' ? EXIT_FAILURE : EXIT_ERROR);

/** Parses `argv` (without node and script), runs the command and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  if (asksForVersion(argv)) {
    process.stdout.write(`mooring: v${cliVersion()}\n`);
    return 0;
  }
  const program = buildProgram();
  const exitOverride = (cmd: Command): void => {
    cmd.exitOverride();
    for (const sub of cmd.commands) exitOverride(sub);
  };
  exitOverride(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are successes; anything else commander rejects is a usage error.
      if (err.exitCode === 0) return 0;
      return usageExitCode(argv);
    }
    process.stderr.write(`✗ ${describeError(err)}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
