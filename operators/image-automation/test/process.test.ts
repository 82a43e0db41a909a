import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);

test('the operator process documents its own flags and rejects a bad --git-backend with exit code 2', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', main, '--help']);
  assert.match(stdout, /--storage-path DIR/);
  assert.match(stdout, /--git-backend cli\|isomorphic/);
  await assert.rejects(
    run(process.execPath, ['--import', 'tsx', main, '--kubeconfig', '/nonexistent', '--git-backend', 'svn']),
    (err: { code?: number; stderr?: string }) =>
      err.code === 2 && /--git-backend must be cli or isomorphic, got svn/.test(err.stderr ?? ''),
  );
});
