// Runs bin/mooring-helm.wasm once inside Node's WASI, in a worker thread so the parent can stop
// it (worker.terminate() interrupts WebAssembly, even a loop with no calls). Plain JavaScript so
// that it needs no loader. The guest gets no environment, its arguments, three open files
// (request, output, errors) and one preopened directory, the chart copy, as /chart.
import { closeSync, openSync } from 'node:fs';
import { WASI } from 'node:wasi';
import { parentPort, workerData } from 'node:worker_threads';

const { module, chartDir, requestPath, stdoutPath, stderrPath } = workerData;
const stdin = openSync(requestPath, 'r');
const stdout = openSync(stdoutPath, 'w');
const stderr = openSync(stderrPath, 'w');
try {
  const wasi = new WASI({
    version: 'preview1',
    args: ['mooring-helm'],
    env: {},
    preopens: { '/chart': chartDir },
    stdin,
    stdout,
    stderr,
    returnOnExit: true,
  });
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  const code = wasi.start(instance);
  parentPort.postMessage({ code });
} catch (err) {
  parentPort.postMessage({ trap: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
} finally {
  closeSync(stdin);
  closeSync(stdout);
  closeSync(stderr);
}
