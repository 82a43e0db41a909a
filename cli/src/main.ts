import { setFlagsFromString } from 'node:v8';
import { run } from './program.ts';

// A CLI process renders a Helm chart once or a few times: V8's optimising compiler would spend
// seconds tiering up the 80 MB renderer module (bin/mooring-helm.wasm) for code that runs once.
// Its baseline compiler alone makes `mooring build helmchart` about 1 s of CPU instead of 5. Set
// before any module is compiled; the operators, which render again and again, keep the default.
setFlagsFromString('--liftoff-only');

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
