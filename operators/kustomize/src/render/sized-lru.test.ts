import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SizedLru } from './sized-lru.ts';

const sizes = (n: number) => new SizedLru<string>({ maxEntries: n, maxSize: 100, sizeOf: (v) => v.length });

test('a thousand small entries all stay when the bounds allow: a cyclic pass over them finds each one', async () => {
  const lru = new SizedLru<string>({ maxEntries: 5000, maxSize: 1_000_000, sizeOf: (v) => v.length });
  for (let i = 0; i < 1000; i++) lru.set(`k${i}`, Promise.resolve('x'.repeat(100)));
  await new Promise((r) => setImmediate(r));
  let found = 0;
  for (let i = 0; i < 1000; i++) if (lru.get(`k${i}`)) found++;
  assert.equal(found, 1000);
  assert.equal(lru.bytes, 100_000);
});

test('the least recently used goes first when the count is over', () => {
  const lru = sizes(2);
  lru.set('a', Promise.resolve('1'));
  lru.set('b', Promise.resolve('2'));
  lru.get('a');
  lru.set('c', Promise.resolve('3'));
  assert.ok(lru.get('a'));
  assert.equal(lru.get('b'), undefined);
  assert.ok(lru.get('c'));
});

test('settled sizes bound the cache; the newest stays even alone over the bound', async () => {
  const lru = sizes(100);
  lru.set('a', Promise.resolve('x'.repeat(60)));
  lru.set('b', Promise.resolve('y'.repeat(30)));
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.bytes, 90);
  lru.set('c', Promise.resolve('z'.repeat(50)));
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.get('a'), undefined, 'the oldest went to make room');
  assert.equal(lru.bytes, 80);
  lru.set('huge', Promise.resolve('h'.repeat(500)));
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.size, 1);
  assert.ok(lru.get('huge'));
});

test('a rejected value is dropped; replacing a key does not count its old size twice', async () => {
  const lru = sizes(10);
  const failed = Promise.reject(new Error('render failed'));
  failed.catch(() => undefined);
  lru.set('bad', failed);
  lru.set('k', Promise.resolve('x'.repeat(10)));
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.get('bad'), undefined);
  lru.set('k', Promise.resolve('x'.repeat(20)));
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.bytes, 20);
});
