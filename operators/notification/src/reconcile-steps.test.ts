// The Alert and Receiver step lists against docs/architecture.md's table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ALERT_STEPS } from './alert-steps.ts';
import { RECEIVER_STEPS } from './receiver-steps.ts';

test("docs/architecture.md's step table names the Alert's and the Receiver's steps, in order", () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/architecture.md', import.meta.url)), 'utf8');
  const row = (kind: string) => {
    const line = doc.split('\n').find((l) => l.startsWith(`| ${kind} (`));
    assert.ok(line, `no row for ${kind}`);
    const steps = line.split('|')[2]!.replace(/\([^)]*\)/g, '');
    return steps.split('→').map((s) => s.trim());
  };
  const names = (steps: readonly { name: string }[]) => steps.map((s) => s.name);
  assert.deepEqual(row('Alert'), names(ALERT_STEPS));
  assert.deepEqual(row('Receiver'), names(RECEIVER_STEPS));
});
