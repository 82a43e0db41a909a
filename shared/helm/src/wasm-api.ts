// The slice of the WebAssembly JS API this package uses. Node has it all; the repository's
// TypeScript lib (ES2023, no DOM) declares none of it as a value, so it is typed here.

/** A compiled module: opaque, structured-cloneable into a worker. */
export type WasmModule = { readonly __wasmModule: unique symbol };

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports?: object) => { exports: Record<string, unknown> };
}

export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
