import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readKnownGaps } from './known-gaps.ts';

function withFile(text: string, check: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'known-gaps-'));
  try {
    const file = join(dir, 'known-gaps.md');
    writeFileSync(file, text);
    check(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('readKnownGaps takes fixture and reason from table rows and skips prose, header and separator', () => {
  const text = [
    '# Known gaps',
    '',
    'Some prose | with a pipe.',
    '',
    '| fixture | reason |',
    '|---|---|',
    '| `smp-retainkeys` | kyaml leaves $retainKeys in the output |',
    '| yaml-long-key | emitter: keys over 128 chars use `? ` | really |',
    '',
  ].join('\n');
  withFile(text, (file) => {
    assert.deepEqual(
      [...readKnownGaps(file)],
      [
        ['smp-retainkeys', 'kyaml leaves $retainKeys in the output'],
        ['yaml-long-key', 'emitter: keys over 128 chars use `? ` | really'],
      ],
    );
  });
});

test('readKnownGaps refuses a fixture listed twice', () => {
  withFile('| fixture | reason |\n|---|---|\n| a | x |\n| a | y |\n', (file) => {
    assert.throws(() => readKnownGaps(file), /lists fixture a twice/);
  });
});

test('the committed known-gaps.md parses', () => {
  const gaps = readKnownGaps(join(import.meta.dirname, 'kustomize', 'known-gaps.md'));
  assert.ok(gaps instanceof Map);
});
