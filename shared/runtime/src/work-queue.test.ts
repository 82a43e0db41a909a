import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from './fake-clock.ts';
import { MIN_REQUEUE_MS, WorkQueue } from './work-queue.ts';

const noJitter = () => 0.5;

function queue(options: ConstructorParameters<typeof WorkQueue>[0] = {}) {
  const clock = new FakeClock();
  return { clock, q: new WorkQueue({ clock, random: noJitter, ...options }) };
}

/** What a promise has resolved with so far, after letting pending continuations run. */
async function peek<T>(p: Promise<T>): Promise<{ value: T } | 'pending'> {
  let state: { value: T } | 'pending' = 'pending';
  void p.then((value) => {
    state = { value };
  });
  await new Promise(setImmediate);
  return state;
}

/** Drains every ready key in order, marking each done. */
async function drain(q: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (q.length > 0) {
    const key = (await q.get())!;
    keys.push(key);
    q.done(key);
  }
  return keys;
}

test('add deduplicates a waiting key', async () => {
  const { q } = queue();
  q.add('ns/a');
  q.add('ns/b');
  q.add('ns/a');
  assert.equal(q.length, 2);
  assert.equal(q.pending, 2);
  assert.deepEqual(await drain(q), ['ns/a', 'ns/b']);
});

test('ready keys are served FIFO and a re-added key keeps its place', async () => {
  const { q } = queue();
  for (const k of ['a', 'b', 'c', 'a', 'b']) q.add(k);
  assert.deepEqual(await drain(q), ['a', 'b', 'c']);
});

test('a key is never handed to two concurrent getters', async () => {
  const { q } = queue();
  const first = q.get();
  const second = q.get();
  q.add('a');
  assert.equal(await first, 'a');
  q.add('a');
  assert.equal(await peek(second), 'pending', 'a is processing, so the second worker must wait');
  assert.equal(q.length, 0);
  assert.equal(q.pending, 1);
  q.add('b');
  assert.equal(await second, 'b');
  q.done('a');
  assert.equal(q.length, 1);
  assert.equal(await q.get(), 'a');
});

test('a key added while processing is ready again only after done, once', async () => {
  const { q } = queue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.length, 0);
  q.done('a');
  assert.equal(q.length, 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  assert.equal(q.length, 0);
  assert.equal(q.pending, 0);
});

test('done on a key that was not re-added does not requeue it; done of an unknown key is ignored', async () => {
  const { q } = queue();
  q.add('a');
  await q.get();
  q.done('a');
  q.done('never');
  assert.equal(q.length, 0);
  assert.equal(q.pending, 0);
});

test('addAfter makes the key ready when the clock reaches the delay', async () => {
  const { q, clock } = queue();
  q.addAfter('a', 1000);
  assert.equal(q.length, 0);
  assert.equal(q.pending, 1);
  const got = q.get();
  clock.advance(999);
  assert.equal(await peek(got), 'pending');
  clock.advance(1);
  assert.equal(await got, 'a');
});

test('addAfter: the earliest pending delay wins', async () => {
  for (const delays of [
    [5000, 1000],
    [1000, 5000],
  ]) {
    const { q, clock } = queue();
    for (const d of delays) q.addAfter('a', d);
    assert.equal(clock.timerCount, 1);
    clock.advance(1000);
    assert.deepEqual(await drain(q), ['a'], `delays ${delays}`);
    clock.advance(10_000);
    assert.equal(q.length, 0, `delays ${delays}: the later delay must not fire too`);
  }
});

test('add supersedes a pending delay', async () => {
  const { q, clock } = queue();
  q.addAfter('a', 1000);
  q.add('a');
  assert.equal(clock.timerCount, 0);
  assert.deepEqual(await drain(q), ['a']);
  clock.advance(1000);
  assert.equal(q.length, 0);
});

test('addAfter is ignored for a key that is ready or due again after processing', async () => {
  const { q, clock } = queue();
  q.add('a');
  q.addAfter('a', 1000);
  assert.equal(clock.timerCount, 0);
  assert.equal(await q.get(), 'a');
  q.add('a');
  q.addAfter('a', 1000);
  assert.equal(clock.timerCount, 0);
});

test('addAfter while processing readies the key after done', async () => {
  const { q, clock } = queue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.addAfter('a', 1000);
  q.done('a');
  assert.equal(q.length, 0);
  assert.equal(q.pending, 1);
  clock.advance(1000);
  assert.equal(q.length, 1);

  // The delay may also fall due before done: then done makes it ready.
  assert.equal(await q.get(), 'a');
  q.addAfter('a', 1000);
  clock.advance(1000);
  assert.equal(q.length, 0);
  q.done('a');
  assert.equal(q.length, 1);
});

test('a changed key is served before keys whose interval or backoff fell due', async () => {
  const { q, clock } = queue();
  for (const k of ['due-1', 'due-2', 'due-3']) q.addAfter(k, 1000);
  q.addRateLimited('retry');
  clock.advance(1000);
  assert.equal(q.length, 4);
  q.add('pushed');
  q.add('new-generation');
  // Changed keys first in the order they changed, then the due ones in the order they fell due.
  assert.deepEqual(await drain(q), ['pushed', 'new-generation', 'retry', 'due-1', 'due-2', 'due-3']);
});

test('a due key that changes moves ahead; a changed key falling due keeps its place', async () => {
  const { q, clock } = queue();
  for (const k of ['a', 'b', 'c']) q.addAfter(k, 1000);
  clock.advance(1000);
  q.add('c');
  assert.equal(q.length, 3, 'c is ready once, not in both lanes');
  q.add('x');
  q.addAfter('x', 1000);
  clock.advance(1000);
  assert.deepEqual(await drain(q), ['c', 'x', 'a', 'b']);
});

test('a key changed while processing goes ahead after done, even if its interval fell due too', async () => {
  const { q, clock } = queue();
  q.add('busy');
  assert.equal(await q.get(), 'busy');
  q.addAfter('busy', 1000);
  q.addAfter('waiting', 1000);
  clock.advance(1000);
  q.add('busy');
  q.done('busy');
  assert.deepEqual(await drain(q), ['busy', 'waiting']);

  // Only due while processing: it queues behind what was already due.
  q.add('busy');
  assert.equal(await q.get(), 'busy');
  q.addAfter('busy', 1000);
  q.addAfter('waiting', 500);
  clock.advance(1000);
  q.done('busy');
  assert.deepEqual(await drain(q), ['waiting', 'busy']);
});

test('addAfter with no delay waits the minimum requeue instead of adding at once', () => {
  const { q, clock } = queue();
  q.addAfter('a', 0);
  q.addAfter('b', -5);
  q.addAfter('c', 100);
  assert.equal(q.length, 0);
  assert.equal(clock.timerCount, 3);
  clock.advance(MIN_REQUEUE_MS - 1);
  assert.equal(q.length, 0);
  clock.advance(1);
  assert.equal(q.length, 3);
});

test('addRateLimited backs off exponentially up to the cap, counting failures', async () => {
  const { q, clock } = queue({ baseDelayMs: 100, maxDelayMs: 1000 });
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    q.addRateLimited('a');
    const start = clock.now();
    while (q.length === 0) clock.advance(1);
    waits.push(clock.now() - start);
    assert.equal(await q.get(), 'a');
    q.done('a');
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1000, 1000]);
  assert.equal(q.failures('a'), 6);
  assert.equal(q.failures('b'), 0);
});

test('addRateLimited applies jitter', () => {
  const { q, clock } = queue({ baseDelayMs: 1000, random: () => 1 });
  q.addRateLimited('a');
  clock.advance(1099);
  assert.equal(q.length, 0);
  clock.advance(1);
  assert.equal(q.length, 1);
});

test('forget resets the failure count and so the backoff', async () => {
  const { q, clock } = queue({ baseDelayMs: 100, maxDelayMs: 1000 });
  for (let i = 0; i < 3; i++) {
    q.addRateLimited('a');
    clock.advance(1000);
    assert.equal(await q.get(), 'a');
    q.done('a');
  }
  assert.equal(q.failures('a'), 3);
  q.forget('a');
  assert.equal(q.failures('a'), 0);
  q.addRateLimited('a');
  clock.advance(99);
  assert.equal(q.length, 0);
  clock.advance(1);
  assert.equal(q.length, 1, 'after forget the delay starts again at base');
});

test('shutDown releases waiting getters and stops the queue', async () => {
  const { q, clock } = queue();
  const getters = [q.get(), q.get()];
  q.addAfter('later', 1000);
  q.shutDown();
  assert.deepEqual(await Promise.all(getters), [undefined, undefined]);
  assert.equal(clock.timerCount, 0);
  assert.equal(q.shuttingDown, true);
  q.add('a');
  q.addAfter('b', 10);
  q.addRateLimited('c');
  clock.advance(10_000);
  assert.equal(q.length, 0);
  assert.equal(await q.get(), undefined);
});

test('shutDown leaves keys being processed to finish', async () => {
  const { q } = queue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.add('a');
  q.shutDown();
  assert.equal(q.pending, 1);
  q.done('a');
  assert.equal(q.pending, 0);
  assert.equal(q.length, 0);
});

test('get resolves undefined when its signal aborts, and the key goes to the next getter', async () => {
  const { q } = queue();
  const ac = new AbortController();
  const aborted = q.get(ac.signal);
  const next = q.get();
  ac.abort();
  assert.equal(await aborted, undefined);
  q.add('a');
  assert.equal(await next, 'a');
  assert.equal(await q.get(ac.signal), undefined, 'an already aborted signal');
});

test('pending counts distinct keys ready, delayed or processing', async () => {
  const { q } = queue();
  q.add('a');
  q.add('b');
  q.addAfter('c', 100);
  assert.equal(q.pending, 3);
  assert.equal(await q.get(), 'a');
  q.addAfter('a', 100);
  assert.equal(q.pending, 3, 'a is processing and delayed: counted once');
  assert.equal(q.length, 1);
});

test('rejects nonsensical options', () => {
  assert.throws(() => new WorkQueue({ baseDelayMs: 10, maxDelayMs: 5 }), /invalid work queue options/);
  assert.throws(() => new WorkQueue({ jitterFraction: 2 }), /invalid work queue options/);
  assert.throws(() => new WorkQueue({ baseDelayMs: 0 }), /invalid work queue options/);
  assert.throws(() => new WorkQueue({ baseDelayMs: Number.NaN }), /invalid work queue options/);
});

test('pending, counted as keys move, always equals the distinct keys ready, delayed or processing', async () => {
  // A seeded walk through every way a key moves: add, the delays, taking, done, timers firing.
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const { clock, q } = queue();
  const keys = ['a', 'b', 'c', 'd', 'e'];
  const taken: string[] = [];
  for (let step = 0; step < 20_000; step++) {
    const key = keys[Math.floor(random() * keys.length)]!;
    const op = Math.floor(random() * 7);
    if (op === 0) q.add(key);
    else if (op === 1) q.addAfter(key, MIN_REQUEUE_MS * (1 + Math.floor(random() * 3)));
    else if (op === 2) q.addRateLimited(key);
    else if (op === 3 && q.length > 0) {
      const got = await q.get();
      if (got !== undefined) taken.push(got);
    } else if (op === 4 && taken.length > 0) q.done(taken.splice(Math.floor(random() * taken.length), 1)[0]!);
    else if (op === 5) clock.advance(Math.floor(random() * 2 * MIN_REQUEUE_MS));
    else if (op === 6) q.forget(key);
    assert.equal(q.pending, q.pendingByScan(), `step ${step}`);
  }
  q.shutDown();
  assert.equal(q.pending, q.pendingByScan());
});
