import { run } from './program.ts';

// A reader that stops early (`mooring export | head`) closes the pipe. Node ignores SIGPIPE, so the
// next write fails with EPIPE; end quietly with the code a shell reports for a command SIGPIPE ended
// (128 + 13), as `flux` does, so a script can still tell that the output was cut short.
const EXIT_BROKEN_PIPE = 141;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(EXIT_BROKEN_PIPE);
    throw err;
  });
}

const code = await run(process.argv.slice(2));
// Let piped output drain, then exit explicitly: kept-alive API connections would hold the process open.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
process.exit(code);
