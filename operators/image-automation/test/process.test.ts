import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);

test('the operator process documents its own flags and rejects a bad --git-backend with exit code 2', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', main, '--help']);
  // Generated from the one flag table: each flag with its meaning, default and environment twin.
  assert.match(
    stdout,
    /--storage-path <value> +Directory the scanned tag lists are kept in.*\(default \/data\) \[MOORING_STORAGE_PATH\]/,
  );
  assert.match(
    stdout,
    /--git-backend <value> +How Git is spoken: cli .* or isomorphic .*\[MOORING_GIT_BACKEND\]/,
  );
  await assert.rejects(
    run(process.execPath, ['--import', 'tsx', main, '--kubeconfig', '/nonexistent', '--git-backend', 'svn']),
    (err: { code?: number; stderr?: string }) =>
      err.code === 2 && /--git-backend must be one of cli, isomorphic, got "svn"/.test(err.stderr ?? ''),
  );
});
