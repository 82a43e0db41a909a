// One measured checkout, in its own process so /usr/bin/time can report its peak RSS (which on
// Linux includes the git processes it waited for). Prints {"ms": <checkout wall time>} on stdout.
import { createGitClient } from '../src/index.ts';

const [backend, url, dir] = process.argv.slice(2);
if (backend === 'none') {
  // Baseline: Node + tsx + the client modules loaded, nothing fetched.
  console.log(JSON.stringify({ ms: 0 }));
} else {
  const client = createGitClient(backend === 'isomorphic' ? 'isomorphic' : 'cli');
  const started = performance.now();
  await client.checkout(url!, { branch: 'main' }, dir!, { timeoutMs: 600_000 });
  console.log(JSON.stringify({ ms: performance.now() - started }));
}
