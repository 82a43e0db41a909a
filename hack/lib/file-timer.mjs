// Loaded into each test file's process by hack/run-tests.ts (through --import, which node --test
// passes on to the processes it starts for the files): when the process exits, it appends the
// file, how long its process lived (load time included) and the CPU it and the programs it ran
// used, to $MOORING_TEST_TIMINGS. Node 20's reporters give each test's duration but not a file's,
// and on 2 cores a file's CPU, more than its wall time, decides what it costs the run.
// Plain JavaScript, because it also loads into bundles that run without tsx.
import { appendFileSync, readFileSync } from 'node:fs';

/** Seconds of CPU of this process and its waited-for children (Linux's /proc), or undefined. */
function cpuSeconds() {
  try {
    // Fields after the command's closing parenthesis; utime, stime, cutime, cstime are 14-17.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
    return ticks / 100; // USER_HZ, 100 on Linux
  } catch {
    return undefined;
  }
}

const out = process.env.MOORING_TEST_TIMINGS;
// Only the processes node --test starts for test files; the runner's own and those a test starts
// (which inherit neither --import nor, mostly, this context) are not files.
if (out && process.env.NODE_TEST_CONTEXT && process.argv[1]) {
  const file = process.argv[1];
  process.once('exit', () => {
    try {
      appendFileSync(out, `${JSON.stringify({ file, seconds: process.uptime(), cpu: cpuSeconds() })}\n`);
    } catch {}
  });
}
