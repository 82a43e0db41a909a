import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { operatorMain, SHARED_FLAGS } from '@mooring/runtime';
import { allInOneEntry } from '../operators/all-in-one/src/entry.ts';
import { operationsDoc } from './gen-operations-doc.ts';
import { repoRoot } from './lib/control-plane.ts';

const committed = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');

test('docs/operations.md lists the current flags and metrics', async () => {
  assert.ok(
    committed === (await operationsDoc()),
    'docs/operations.md is stale: run node --import tsx hack/gen-operations-doc.ts',
  );
  assert.match(committed, /--leader-elect/);
  assert.match(committed, /mooring_reconcile_duration_seconds/);
});

/** The flags a program's `--help` lists. */
async function helpFlags(entry: string): Promise<Set<string>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', entry, '--help'], {
    cwd: repoRoot,
  });
  return flagsIn(stdout);
}

function flagsIn(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}--([a-z0-9-]+)/gm)].map((m) => m[1]!));
}

// Every flag an operator parses is in its --help and in docs/operations.md, under its operator,
// and nothing else is: all three come from the one declaration, and this fails when they drift.
describe('every operator’s flags are in --help and docs/operations.md', async () => {
  const all = await allInOneEntry();
  const shared = Object.keys(SHARED_FLAGS);
  const sectionOf = (name: string): string => {
    const start = committed.indexOf(`### The ${name} operator\n`);
    assert.ok(start >= 0, `docs/operations.md has no section for the ${name} operator`);
    const end = committed.indexOf('\n### ', start + 1);
    return committed.slice(start, end === -1 ? undefined : end);
  };

  for (const def of all.operators) {
    test(`the ${def.name} operator`, async () => {
      const own = Object.keys(def.extraFlags ?? {});
      // In-process: what operators/<name>/src/main.ts runs (operatorMain with its one operator),
      // without starting Node and tsx once per operator; the all-in-one below is a real process.
      let help = '';
      const code = await operatorMain(
        { program: `mooring-${def.name}`, operators: [def] },
        { argv: ['--help'], stdout: (text) => (help += `${text}\n`) },
      );
      assert.equal(code, 0);
      const listed = flagsIn(help);
      assert.deepEqual([...listed].sort(), [...shared, 'help', ...own].sort(), `${def.name} --help`);
      const section = sectionOf(def.name);
      for (const flag of own) assert.ok(section.includes(`| \`--${flag}\` |`), `--${flag} in operations.md`);
      assert.deepEqual(
        [...section.matchAll(/^\| `--([a-z0-9-]+)` \|/gm)].map((m) => m[1]).sort(),
        [...own].sort(),
      );
    });
  }

  test('the all-in-one process', async () => {
    const listed = await helpFlags('operators/all-in-one/src/main.ts');
    const own = [
      ...Object.keys(all.flags ?? {}),
      ...all.operators.flatMap((d) => Object.keys(d.extraFlags ?? {})),
    ];
    assert.deepEqual([...listed].sort(), [...new Set([...shared, 'help', ...own])].sort());
    for (const flag of Object.keys(all.flags ?? {})) assert.ok(committed.includes(`| \`--${flag}\` |`), flag);
    for (const flag of Object.keys(all.defaults ?? {})) {
      assert.match(
        committed,
        new RegExp(`^\\| \`--${flag}\` \\| .* \\| .*${all.defaults![flag]!.default}`, 'm'),
      );
    }
  });
});
