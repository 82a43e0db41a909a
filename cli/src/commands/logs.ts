import type { KubeClient, KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import type { LogFilter } from '../log-records.ts';
import { sessionOf } from '../session.ts';

interface LogsFlags {
  kind?: string;
  name?: string;
  level?: string;
  allNamespaces?: boolean;
  follow?: boolean;
  tail?: string;
  since?: string;
  operatorsNamespace: string;
}

const LEVELS = ['debug', 'info', 'warn', 'error'];
/** Every operator Deployment's pod template carries it (config/operators/*.yaml). */
const OPERATOR_PODS = 'app.kubernetes.io/component=operator';

/** One container whose log is read, and the operator it belongs to. */
interface LogSource {
  pod: string;
  container: string;
  operator: string;
}

interface PodView extends KubeObject {
  spec?: { containers?: { name: string }[] };
  status?: { phase?: string };
}

/** The operators' containers in `namespace`, by operator then pod; pods not started yet have no log. */
async function logSources(client: KubeClient, namespace: string): Promise<LogSource[]> {
  const pods = await client.list<PodView>('v1', 'Pod', { namespace, labelSelector: OPERATOR_PODS });
  return pods.items
    .filter((p) => p.status?.phase !== 'Pending')
    .flatMap((p) =>
      (p.spec?.containers ?? []).map((c) => ({
        pod: p.metadata.name ?? '',
        container: c.name,
        operator: p.metadata.labels?.['app.kubernetes.io/name'] ?? p.metadata.name ?? '',
      })),
    )
    .sort((a, b) => a.operator.localeCompare(b.operator) || a.pod.localeCompare(b.pod));
}

/** `mooring logs`: the operators' log lines about Mooring objects, as `flux logs` shows them. */
export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description("show the operators' logs about objects, e.g. logs --kind Kustomization --name apps")
    .option('--kind <kind>', 'only lines about objects of this kind')
    .option('--name <name>', 'only lines about objects of this name')
    .option('--level <level>', `only lines of this level: ${LEVELS.join(', ')}`)
    .option('-A, --all-namespaces', 'lines about objects in every namespace, and lines about none')
    .option('-f, --follow', 'keep streaming new lines from every operator until Ctrl-C')
    .option('--tail <lines>', 'only the last N lines of each operator container, before filtering')
    .option('--since <duration>', 'only lines newer than this, e.g. 10m')
    .option('--operators-namespace <ns>', 'the namespace the operators run in', 'mooring-system')
    .action(async (flags: LogsFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR, describeError } = await import('../cli-error.ts');
      const { matchKinds } = await import('../kinds.ts');
      const { renderLine } = await import('../log-records.ts');
      const { isDuration, parseDuration } = await import('@mooring/runtime');

      let kind: string | undefined;
      if (flags.kind !== undefined) {
        kind = matchKinds([flags.kind], false)?.kinds[0]?.kind;
        if (!kind)
          throw new CliError(
            `--kind '${flags.kind}' is not a Mooring kind: try --kind Kustomization.`,
            EXIT_ERROR,
          );
      }
      const level = flags.level?.toLowerCase();
      if (level !== undefined && !LEVELS.includes(level))
        throw new CliError(
          `--level '${flags.level}' is not a level: use one of ${LEVELS.join(', ')}.`,
          EXIT_ERROR,
        );
      if (flags.tail !== undefined && !/^\d+$/.test(flags.tail))
        throw new CliError(
          `--tail '${flags.tail}' is not a number of lines: write e.g. --tail 20.`,
          EXIT_ERROR,
        );
      if (flags.since !== undefined && !isDuration(flags.since))
        throw new CliError(`--since '${flags.since}' is not a duration: write e.g. --since 10m.`, EXIT_ERROR);
      const sinceSeconds =
        flags.since === undefined ? undefined : Math.max(1, Math.ceil(parseDuration(flags.since) / 1000));

      const session = sessionOf(cmd);
      await session.use(async (client, namespace) => {
        const filter: LogFilter = {
          kind,
          name: flags.name,
          level,
          namespace: flags.allNamespaces ? undefined : namespace,
        };
        const sources = await logSources(client, flags.operatorsNamespace);
        if (sources.length === 0)
          throw new CliError(
            `no running Mooring operator pods in ${flags.operatorsNamespace}: run 'mooring check', or pass --operators-namespace.`,
          );

        const stop = new AbortController();
        const onSignal = (): void => stop.abort();
        if (flags.follow) {
          process.once('SIGINT', onSignal);
          process.once('SIGTERM', onSignal);
        }
        let printed = 0;
        let failed = false;
        const read = async (source: LogSource, emit: (line: string) => void): Promise<void> => {
          const path = `/api/v1/namespaces/${encodeURIComponent(flags.operatorsNamespace)}/pods/${encodeURIComponent(source.pod)}/log`;
          const query = {
            container: source.container,
            tailLines: flags.tail,
            sinceSeconds,
            follow: flags.follow ? true : undefined,
          };
          try {
            for await (const raw of client.streamLines(path, query, stop.signal)) {
              const line = renderLine(raw, source.operator, filter);
              if (line !== undefined) emit(line);
            }
          } catch (err) {
            if (stop.signal.aborted) return; // Ctrl-C ends a follow
            failed = true;
            process.stderr.write(`✗ cannot read the log of pod ${source.pod}: ${describeError(err)}\n`);
          }
        };
        try {
          if (flags.follow) {
            // Lines go out as they arrive, from every pod at once.
            const emit = (line: string): void => {
              printed++;
              process.stdout.write(`${line}\n`);
            };
            process.stderr.write(`◎ following ${sources.length} operator container(s); Ctrl-C stops\n`);
            await Promise.all(sources.map((s) => read(s, emit)));
          } else {
            // Read all at once, print pod by pod so each operator's lines stay in order.
            const outputs = await Promise.all(
              sources.map(async (s) => {
                const lines: string[] = [];
                await read(s, (line) => lines.push(line));
                return lines;
              }),
            );
            for (const lines of outputs) {
              printed += lines.length;
              if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
            }
          }
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
        if (printed === 0 && !failed) process.stderr.write('no log lines matched\n');
        if (failed) process.exitCode = 1;
      });
    });
}
