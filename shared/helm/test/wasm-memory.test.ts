import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type WasmMemory, wasm } from '../src/wasm-api.ts';
import { capMemory, pagesFor } from '../src/wasm-memory.ts';

// (module (memory (export "memory") 2)) — no maximum, like Go's wasip1 output.
const module = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x05,
  0x03,
  0x01,
  0x00,
  0x02, // memory section: one memory, no max, 2 pages
  0x07,
  0x0a,
  0x01,
  0x06,
  0x6d,
  0x65,
  0x6d,
  0x6f,
  0x72,
  0x79,
  0x02,
  0x00, // export "memory"
]);

function memoryOf(bytes: Uint8Array): WasmMemory {
  const instance = new wasm.Instance(new wasm.Module(bytes));
  return instance.exports.memory as WasmMemory;
}

describe('capMemory', () => {
  it('without it the memory grows past any cap', () => {
    assert.equal(memoryOf(module).grow(300), 2);
  });

  it('sets the maximum: growing past it fails, up to it works', () => {
    const mem = memoryOf(capMemory(module, 200));
    assert.equal(mem.buffer.byteLength, 2 * 65536);
    assert.throws(() => mem.grow(199), RangeError);
    assert.equal(mem.grow(198), 2);
    assert.throws(() => mem.grow(1), RangeError);
  });

  it('a cap of 65536 pages takes a three-byte LEB128 and the section length follows', () => {
    const capped = capMemory(module, 65536);
    assert.equal(capped.length, module.length + 3); // the maximum's three bytes
    assert.equal(memoryOf(capped).grow(10), 2);
  });

  it('refuses a cap below the initial memory, a non-module and a module without memory', () => {
    assert.throws(() => capMemory(module, 1), /initial memory \(2 pages\) is above the cap \(1\)/);
    assert.throws(() => capMemory(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 10), /not a WebAssembly module/);
    assert.throws(() => capMemory(module.subarray(0, 8), 10), /defines no memory of its own/);
  });

  it('pagesFor rounds down to 64 KiB pages within wasm32', () => {
    assert.equal(pagesFor(256 << 20), 4096);
    assert.equal(pagesFor(65536 + 1), 1);
    assert.equal(pagesFor(1), 1);
    assert.equal(pagesFor(2 ** 40), 65536);
  });
});
