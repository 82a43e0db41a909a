// One warm Helm renderer: bin/mooring-helm.wasm (a reactor) instantiated once inside Node's WASI,
// in a worker thread so the parent can stop it (worker.terminate() interrupts WebAssembly, even a
// loop with no calls, and an Atomics.wait). The Go runtime and Helm's package init run once, in
// _initialize; each render is then one call of the module's exports. Plain JavaScript so that it
// needs no loader.
//
// The guest gets no environment, its name as its one argument, /dev/null as stdin and stdout, an
// append-only file as stderr (where Go writes a fatal error) and no directory: each chart comes
// in its request. Only a one-off renderer given `preopen` (the sandbox tests) sees that
// directory, as /chart.
//
// Messages: parent → worker {request} (the encoded request, chart-files.ts encodeRequest, its
// buffer transferred); worker → parent
// {type:'ready'}, {type:'result', status, output, memoryBytes} (output an ArrayBuffer, transferred),
// {type:'trap', message} (the instance is unusable), {type:'lookup', query} while the guest waits
// for the answer in the shared buffer (see answerLookup in renderer-worker.ts).
//
// Besides lookup, the host gives the guest one thing: RSA keys for sprig (rsa_key), generated
// here because the guest's prime search is slow without assembly, and made ahead of the renders
// that will ask for them (rsa-key-reserve.mjs).
import { closeSync, openSync } from 'node:fs';
import { WASI } from 'node:wasi';
import { parentPort, workerData } from 'node:worker_threads';
import { RsaKeyReserve } from './rsa-key-reserve.mjs';

const { module, preopen, stderrPath, lookupBuffer } = workerData;
// lookupBuffer: [state, length] as Int32, then the answer's bytes. state 0: waiting, 1: answered;
// length < 0: an error message of -length bytes.
const control = new Int32Array(lookupBuffer, 0, 2);
const answerBytes = new Uint8Array(lookupBuffer, 8);

const fds = [openSync('/dev/null', 'r'), openSync('/dev/null', 'w'), openSync(stderrPath, 'a')];
const wasi = new WASI({
  version: 'preview1',
  args: ['mooring-helm'],
  env: {},
  preopens: preopen ? { '/chart': preopen } : {},
  stdin: fds[0],
  stdout: fds[1],
  stderr: fds[2],
  returnOnExit: true,
});

let instance;
let pendingAnswer;
let pendingKey;
// The RSA sizes sprig asks for (genCA and the certificates 2048, genPrivateKey 4096); any other
// size is declined and the guest generates the key itself.
const HOST_RSA_BITS = new Set([2048, 4096]);
const keys = new RsaKeyReserve();
const memory = () => new Uint8Array(instance.exports.memory.buffer);

const host = {
  lookup(queryAddress, queryLength) {
    const query = Buffer.from(memory().slice(queryAddress, queryAddress + queryLength)).toString('utf8');
    Atomics.store(control, 0, 0);
    parentPort.postMessage({ type: 'lookup', query });
    Atomics.wait(control, 0, 0);
    const length = Atomics.load(control, 1);
    pendingAnswer = answerBytes.slice(0, Math.abs(length));
    return length;
  },
  lookup_answer(address) {
    memory().set(pendingAnswer, address);
    pendingAnswer = undefined;
  },
  // sprig's RSA keys (hack/tools/helm-renderer/sprig-overlay): OpenSSL's prime search is native.
  rsa_key(bits) {
    if (!HOST_RSA_BITS.has(bits)) return 0;
    pendingKey = keys.take(bits);
    return pendingKey.length;
  },
  rsa_key_answer(address) {
    memory().set(pendingKey, address);
    pendingKey = undefined;
  },
};

function render(request) {
  const { mooring_request, mooring_render, mooring_result, mooring_release } = instance.exports;
  const at = mooring_request(request.length);
  memory().set(request, at);
  const length = mooring_render();
  const result = mooring_result();
  const view = memory();
  const status = view[result];
  const output = view.slice(result + 1, result + length).buffer;
  const memoryBytes = view.byteLength;
  parentPort.postMessage({ type: 'result', status, output, memoryBytes }, [output]);
  // Off the caller's path: the result is already on its way.
  mooring_release();
  keys.renderDone();
}

function trapped(err) {
  parentPort.postMessage({
    type: 'trap',
    message: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  for (const fd of fds) closeSync(fd);
  parentPort.close();
}

try {
  instance = await WebAssembly.instantiate(module, { ...wasi.getImportObject(), mooring: host });
  wasi.initialize(instance);
  parentPort.on('message', (m) => {
    try {
      render(m.request);
    } catch (err) {
      trapped(err);
    }
  });
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  trapped(err);
}
