import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually, testCluster } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

const MAIN = fileURLToPath(new URL('../bin/mooring.js', import.meta.url));

test('mooring ui as users start it: prints a tokened loopback URL that serves the page, stops on Ctrl-C', async (t) => {
  const { kubeconfig } = await testCluster();
  // The entry users run (the CLI's bundle): the page is bundled at start from cli/ui, esbuild from node_modules.
  const child = spawn(process.execPath, [MAIN, 'ui', '--port', '0', '--no-open'], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await eventually(
    'the printed URL',
    async () => /^mooring ui: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,})$/m.exec(stdout)?.[1],
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; stderr: ${stderr}`);
  });
  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<title>Mooring<\/title>/);
  const withoutToken = await fetch(url.replace(/\?.*/, 'api/objects'));
  assert.equal(withoutToken.status, 403);
  child.kill('SIGINT');
  assert.equal(await exited, 0, stderr);

  const badPort = await mooring(['ui', '--port', 'eighty', '--no-open'], { env: { KUBECONFIG: kubeconfig } });
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port 'eighty' is not a port number/);
});
