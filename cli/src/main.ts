import { run } from './program.ts';

const code = await run(process.argv.slice(2));
// Let piped output drain, then exit explicitly: kept-alive API connections would hold the process open.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
process.exit(code);
