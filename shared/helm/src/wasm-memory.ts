// Caps a WebAssembly module's own linear memory. Go's wasip1 port declares its memory in the
// module (no import) with no maximum, so the cap is written into the module's memory section:
// memory.grow past it fails, and the Go runtime stops with "out of memory". The host's
// memory is never at the guest's disposal beyond this.

const PAGE = 65536;
const MAX_PAGES = 65536; // 4 GiB, wasm32's whole address space

function readU32(buf: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    const byte = buf[pos++];
    if (byte === undefined) throw new Error('wasm: truncated LEB128');
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: pos };
    shift += 7;
    if (shift > 35) throw new Error('wasm: LEB128 too long');
  }
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return out;
}

/** The pages a byte limit allows (rounded down, at least 1, at most wasm32's 65536). */
export function pagesFor(bytes: number): number {
  return Math.max(1, Math.min(MAX_PAGES, Math.floor(bytes / PAGE)));
}

/**
 * The module with its one defined memory's maximum set to `maxPages` (64 KiB each). Throws when
 * the module imports its memory or defines none, or when its initial size is already above the cap.
 */
export function capMemory(module: Uint8Array, maxPages: number): Uint8Array {
  if (
    module.length < 8 ||
    module[0] !== 0 ||
    module[1] !== 0x61 ||
    module[2] !== 0x73 ||
    module[3] !== 0x6d
  ) {
    throw new Error('wasm: not a WebAssembly module');
  }
  let pos = 8;
  while (pos < module.length) {
    const id = module[pos]!;
    const size = readU32(module, pos + 1);
    const start = size.next;
    const end = start + size.value;
    if (id === 5) {
      const count = readU32(module, start);
      if (count.value !== 1) throw new Error(`wasm: ${count.value} memories; expected one`);
      const flags = module[count.next]!;
      if (flags & ~1) throw new Error(`wasm: memory flags ${flags} not supported`);
      const min = readU32(module, count.next + 1);
      if (min.value > maxPages) {
        throw new Error(
          `wasm: the module's initial memory (${min.value} pages) is above the cap (${maxPages})`,
        );
      }
      const payload = [1, 1, ...writeU32(min.value), ...writeU32(maxPages)];
      const section = [5, ...writeU32(payload.length), ...payload];
      const out = new Uint8Array(pos + section.length + (module.length - end));
      out.set(module.subarray(0, pos), 0);
      out.set(section, pos);
      out.set(module.subarray(end), pos + section.length);
      return out;
    }
    pos = end;
  }
  // An imported memory (no memory section) would escape this cap: refuse it.
  throw new Error('wasm: the module defines no memory of its own');
}
