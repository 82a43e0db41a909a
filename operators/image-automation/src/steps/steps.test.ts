// The image-automation kinds' step lists against docs/architecture.md's table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { IMAGE_POLICY_STEPS } from './image-policy/index.ts';
import { IMAGE_REPOSITORY_STEPS } from './image-repository/index.ts';
import { IMAGE_UPDATE_AUTOMATION_STEPS, PUSH_ATTEMPT_STEPS } from './image-update-automation/index.ts';

test("docs/architecture.md's step table names each image kind's steps, in order", () => {
  const doc = readFileSync(
    fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url)),
    'utf8',
  );
  const row = (kind: string) => {
    const line = doc.split('\n').find((l) => l.startsWith(`| ${kind} |`));
    assert.ok(line, `no row for ${kind}`);
    const steps = line.split('|')[2]!.replace(/\([^)]*\)/g, '');
    return steps.split('→').map((s) => s.trim());
  };
  const names = (steps: readonly { name: string }[]) => steps.map((s) => s.name);
  assert.deepEqual(row('ImageRepository'), names(IMAGE_REPOSITORY_STEPS));
  assert.deepEqual(row('ImagePolicy'), names(IMAGE_POLICY_STEPS));
  assert.deepEqual(row('ImageUpdateAutomation'), names(IMAGE_UPDATE_AUTOMATION_STEPS));
  assert.deepEqual(row('ImageUpdateAutomation attempt'), names(PUSH_ATTEMPT_STEPS));
});
