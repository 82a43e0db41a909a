import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatListenAddress, type ListenAddress, parseListenAddress } from './listen-address.ts';

describe('parseListenAddress', () => {
  const valid: [string, ListenAddress][] = [
    [':8080', { host: undefined, port: 8080 }],
    ['127.0.0.1:8080', { host: '127.0.0.1', port: 8080 }],
    ['localhost:9440', { host: 'localhost', port: 9440 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['[::]:0', { host: '::', port: 0 }],
    ['8080', { host: undefined, port: 8080 }],
    ['0', { host: undefined, port: 0 }],
    [':0', { host: undefined, port: 0 }],
    [':65535', { host: undefined, port: 65_535 }],
  ];
  for (const [text, want] of valid) {
    it(`parses ${JSON.stringify(text)}`, () => assert.deepEqual(parseListenAddress(text), want));
  }

  const invalid = ['', ':', 'localhost', ':http', ':65536', ':-1', '::1:8080', '[::1]', 'a b:80', ':80x'];
  for (const text of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseListenAddress(text), /invalid listen address/);
    });
  }
});

describe('formatListenAddress', () => {
  const cases: [ListenAddress, string][] = [
    [{ host: undefined, port: 8080 }, ':8080'],
    [{ host: '127.0.0.1', port: 1 }, '127.0.0.1:1'],
    [{ host: '::1', port: 2 }, '[::1]:2'],
  ];
  for (const [addr, want] of cases) {
    it(`formats ${want}`, () => {
      assert.equal(formatListenAddress(addr), want);
      assert.deepEqual(parseListenAddress(want), addr);
    });
  }
});
