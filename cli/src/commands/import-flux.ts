import type { Command } from 'commander';

/** `mooring import-flux <files or dirs...>`: prints Flux manifests rewritten for Mooring. */
export function registerImportFlux(program: Command): void {
  program
    .command('import-flux')
    .description(
      "rewrite Flux manifests (*.toolkit.fluxcd.io) to Mooring's groups; one line per object it could not convert on stderr, exit 1 if any",
    )
    .argument('<paths...>', 'YAML files or directories (searched recursively)')
    .option('--strict', 'also exit 1 when a field has no Mooring equivalent (the API server would drop it)')
    .action(async (paths: string[], flags: { strict?: boolean }) => {
      const { readdirSync, readFileSync, statSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { importFlux } = await import('../flux-import.ts');
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      const files: string[] = [];
      const walk = (p: string): void => {
        let st: ReturnType<typeof statSync>;
        try {
          st = statSync(p);
        } catch {
          throw new CliError(`${p} does not exist: pass Flux manifest files or folders.`, EXIT_ERROR);
        }
        if (st.isDirectory())
          for (const e of readdirSync(p).sort()) {
            if (!e.startsWith('.')) walk(join(p, e));
          }
        else if (/\.ya?ml$/.test(p) || paths.includes(p)) files.push(p);
      };
      for (const p of paths) walk(p);
      let warned = false;
      let refused = 0;
      for (const file of files) {
        let result: ReturnType<typeof importFlux>;
        try {
          result = importFlux(readFileSync(file, 'utf8'));
        } catch (err) {
          throw new CliError(`${file}: ${(err as Error).message}.`, EXIT_ERROR);
        }
        process.stdout.write(result.yaml);
        // One line per object: what it could not get, errors first.
        const byObject = new Map<string, typeof result.notes>();
        for (const n of result.notes) byObject.set(n.object, [...(byObject.get(n.object) ?? []), n]);
        for (const [object, notes] of byObject) {
          const error = notes.some((n) => n.severity === 'error');
          if (error) refused++;
          else warned = true;
          const sorted = [...notes].sort(
            (a, b) => Number(b.severity === 'error') - Number(a.severity === 'error'),
          );
          process.stderr.write(
            `${error ? '✗' : '⚠'} ${file}: ${object}: ${sorted.map((n) => n.message).join('; ')}\n`,
          );
        }
      }
      if (refused > 0)
        throw new CliError(
          `${refused} object${refused === 1 ? '' : 's'} could not be converted, so a cluster with only Mooring would refuse the output as it is: change or remove ${refused === 1 ? 'it' : 'them'} first.`,
        );
      if (warned && flags.strict) process.exitCode = 1;
    });
}
