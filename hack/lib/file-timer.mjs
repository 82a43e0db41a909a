// Loaded into each test file's process by hack/run-tests.ts (through --import, which node --test
// passes on to the processes it starts for the files): when the process exits, it appends the
// file and how long its process lived, load time included, to $MOORING_TEST_TIMINGS. Node 20's
// reporters give each test's duration but not a file's, and a file's cost is mostly its process.
// Plain JavaScript, because it also loads into bundles that run without tsx.
import { appendFileSync } from 'node:fs';

const out = process.env.MOORING_TEST_TIMINGS;
// Only the processes node --test starts for test files; the runner's own and those a test starts
// (which inherit neither --import nor, mostly, this context) are not files.
if (out && process.env.NODE_TEST_CONTEXT && process.argv[1]) {
  const file = process.argv[1];
  process.once('exit', () => {
    try {
      appendFileSync(out, `${JSON.stringify({ file, seconds: process.uptime() })}\n`);
    } catch {}
  });
}
