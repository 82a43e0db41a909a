import { readFileSync } from 'node:fs';
import type { Command } from 'commander';

/** The CLI's version, from its package.json. */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** `mooring version`: prints the CLI version (`--client` is accepted for kubectl habits). */
export function registerVersion(program: Command): void {
  program
    .command('version')
    .description('print the version of the mooring CLI')
    .option('--client', 'client version only (the default)')
    .action(() => {
      process.stdout.write(`mooring ${cliVersion()}\n`);
    });
}
