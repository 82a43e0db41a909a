import type { Command } from 'commander';

/** `mooring import-flux <files or dirs...>`: prints Flux manifests rewritten for Mooring. */
export function registerImportFlux(program: Command): void {
  program
    .command('import-flux')
    .description("rewrite Flux manifests (*.toolkit.fluxcd.io) to Mooring's groups; notes go to stderr")
    .argument('<paths...>', 'YAML files or directories (searched recursively)')
    .option('--strict', 'exit 1 when a kind or field has no Mooring equivalent')
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
      let noted = false;
      for (const file of files) {
        let result: ReturnType<typeof importFlux>;
        try {
          result = importFlux(readFileSync(file, 'utf8'));
        } catch (err) {
          throw new CliError(`${file}: ${(err as Error).message}.`, EXIT_ERROR);
        }
        process.stdout.write(result.yaml);
        for (const n of result.notes) {
          noted = true;
          process.stderr.write(`⚠ ${file}: ${n.object}: ${n.message}\n`);
        }
      }
      if (noted && flags.strict) process.exitCode = 1;
    });
}
