import type { Command } from 'commander';
import { CliError } from '../cli-error.ts';

/** The environment as substitution variables; unset entries are dropped, empty ones kept. */
function environment(): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) vars[name] = value;
  return vars;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The operator's substitution error as one sentence with the next step. */
function advice(message: string): string {
  const unset = /variable '([^']+)' is not set/.exec(message);
  if (unset) return `${message}: export it or give it a default, e.g. \${${unset[1]}:=value}.`;
  if (/is not a valid variable reference/.test(message))
    return `${message}: a name is letters, digits and _, not starting with a digit.`;
  return `${message}: quote the field in the manifest.`;
}

/**
 * The kustomize operator substitutes built objects, not raw text: each object is written as YAML,
 * substituted and read back. To show users exactly what the operator will apply, stdin is read
 * as YAML documents and each one goes through the operator's own function; the result is printed
 * with the emitter `mooring build` uses.
 */
async function substituteStream(input: string, strict: boolean): Promise<string> {
  const [{ parseAllDocuments }, { SubstitutionError, substituteVariables }, { toYAML }] = await Promise.all([
    import('yaml'),
    import('@mooring/kustomize-operator/substitute'),
    import('@mooring/kustomize'),
  ]);
  const vars = environment();
  const out: Record<string, unknown>[] = [];
  for (const [i, doc] of parseAllDocuments(input).entries()) {
    const label = `document ${i + 1}`;
    if (doc.errors.length > 0)
      throw new CliError(
        `stdin ${label} is not valid YAML (${doc.errors[0]!.message.split('\n')[0]!.replace(/:$/, '')}): pass Kubernetes manifests, e.g. the output of 'mooring build'.`,
      );
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing `---`
    if (typeof value !== 'object' || Array.isArray(value))
      throw new CliError(
        `stdin ${label} is not a YAML object: mooring envsubst substitutes Kubernetes manifests as the kustomize operator does.`,
      );
    const obj = value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    const ns = typeof obj.metadata?.namespace === 'string' ? `${obj.metadata.namespace}/` : '';
    const name = obj.kind && obj.metadata?.name ? `${obj.kind}/${ns}${obj.metadata.name}` : label;
    try {
      // Flux's envsubst always substitutes, so the strategy is `Always`, not `WithVariables`.
      out.push(
        substituteVariables(value as Record<string, unknown>, vars, { strict, strategy: 'Always' }, name),
      );
    } catch (err) {
      if (!(err instanceof SubstitutionError)) throw err;
      throw new CliError(advice(err.message));
    }
  }
  return toYAML(out.map((object) => ({ object: object as never, previousIds: [] })));
}

/** `mooring envsubst [--strict]`: postBuild substitution from the environment, stdin to stdout. */
export function registerEnvsubst(program: Command): void {
  program
    .command('envsubst')
    .description(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Flux's ${VAR} syntax, shown to users.
      "substitute ${VAR}, ${VAR:=default} and $${VAR} in YAML from stdin with the environment, exactly as the kustomize operator's postBuild does",
    )
    .option('--strict', 'fail when a variable is not set and has no default')
    .action(async (opts: { strict?: boolean }) => {
      process.stdout.write(await substituteStream(await readStdin(), !!opts.strict));
    });
}
