// clearableTimeout's signal must time out inside AbortSignal.any after a garbage collection: on Node 20 a
// composite holds its inputs weakly, and AbortSignal.timeout's signal, held by nothing else, was
// collected with its timer, so a reconcile's spec.timeout never fired (a hook wait outlived a 30 s
// timeout by 8 minutes).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { childSignal, clearableTimeout, DeadlineScope } from './clock.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a timeout combined with AbortSignal.any still aborts after the garbage collector ran', async () => {
  const shutdown = new AbortController();
  const signal = AbortSignal.any([shutdown.signal, clearableTimeout(200).signal]);
  let aborted = false;
  signal.addEventListener('abort', () => (aborted = true));
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  // Generous: only whether it fires is asserted, not when.
  const deadline = Date.now() + 30_000;
  while (!aborted && Date.now() < deadline) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(aborted, 'the combined signal never aborted');
  assert.equal((signal.reason as DOMException).name, 'TimeoutError');
});

test('the timer holds no process open', async () => {
  // Unref'd: a 24-day timeout must not keep an operator that is shutting down alive.
  const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  clearableTimeout(24 * 24 * 3600_000);
  const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  assert.equal(timers, before, 'an unref’d timer is not an active resource');
});

test('a cleared timeout never aborts; one not cleared does, as a TimeoutError', async () => {
  const cleared = clearableTimeout(30);
  cleared.clear();
  const kept = clearableTimeout(30);
  // Generous: only whether each fires is asserted, not when.
  const deadline = Date.now() + 30_000;
  while (!kept.signal.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((kept.signal.reason as DOMException).name, 'TimeoutError');
  assert.equal(cleared.signal.aborted, false);
});

test('a child signal follows its parent until detached, and leaves no listener on it', () => {
  const parent = new AbortController();
  // A thousand reconciles come and go on one controller's stop signal.
  for (let i = 0; i < 1000; i++) childSignal(parent.signal).detach();
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  const detached = childSignal(parent.signal);
  detached.detach();
  const live = childSignal(parent.signal);
  parent.abort(new Error('shutting down'));
  assert.equal((live.signal.reason as Error).message, 'shutting down');
  assert.equal(detached.signal.aborted, false);
  // A child of a parent already stopped starts stopped.
  assert.equal(childSignal(parent.signal).signal.aborted, true);
});

test('a child aborted on its own (a stalled watch) leaves its parent and its siblings running', () => {
  const parent = new AbortController();
  const stalled = childSignal(parent.signal);
  const sibling = childSignal(parent.signal);
  stalled.abort();
  assert.equal(stalled.signal.aborted, true);
  assert.equal(parent.signal.aborted, false);
  assert.equal(sibling.signal.aborted, false);
  stalled.detach();
  assert.equal(getEventListeners(parent.signal, 'abort').length, 1, "only the sibling's listener is left");
});

test("a DeadlineScope's deadlines fire on time until it is cleared, and follow its stop signal", async () => {
  const stop = new AbortController();
  const ended = new DeadlineScope(stop.signal);
  const cleared = [ended.signal(30), ended.signal(30)];
  ended.clear();
  // Not cleared: it fires, and before the wait below ends, since Node runs timers in the order
  // they are due, as would the two above had the clear not cancelled them.
  const running = new DeadlineScope(stop.signal).signal(30);
  const unstoppable = new DeadlineScope().signal(30);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal((running.reason as DOMException).name, 'TimeoutError');
  assert.equal(
    (unstoppable.reason as DOMException).name,
    'TimeoutError',
    'a scope with no stop signal times out too',
  );
  assert.deepEqual(
    cleared.map((s) => s.aborted),
    [false, false],
  );
  const stopped = new DeadlineScope(stop.signal).signal(60_000);
  stop.abort(new Error('shutting down'));
  assert.match(String(stopped.reason), /shutting down/);
});
