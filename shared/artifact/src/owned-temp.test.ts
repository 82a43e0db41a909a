import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startTempOwner } from '../test/owned-temp-process.ts';
import {
  currentOwner,
  ownedTempPrefix,
  ownerAlive,
  parseOwnedTempName,
  removeStaleTempDirs,
} from './owned-temp.ts';

async function parentDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'owned-temp-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const hasProc = existsSync('/proc/self/stat');

describe('owned temp directories', () => {
  it('removes what a killed process left and keeps the directories of live ones', async (t) => {
    const parent = await parentDir(t);
    const dead = await startTempOwner(parent, 'artifact');
    const deadFetch = await startTempOwner(parent, 'fetch');
    const live = await startTempOwner(parent, 'artifact');
    t.after(() => live.kill());
    await dead.kill();
    await deadFetch.kill();
    const mine = await mkdtemp(join(parent, ownedTempPrefix('artifact')));
    // Names that are not owned temp directories of the artifact kinds stay, whoever made them.
    const others = ['mooring-fetch-test-abc123', 'mooring-git-1-0-abcdef', 'unrelated'];
    for (const name of others) await mkdir(join(parent, name));

    const removed = await removeStaleTempDirs(parent);

    assert.deepEqual(
      removed.sort(),
      [dead.dir, dead.scratch, deadFetch.dir, deadFetch.scratch].map((p) => basename(p)).sort(),
    );
    for (const gone of [dead.dir, dead.scratch, deadFetch.dir, deadFetch.scratch])
      assert.equal(existsSync(gone), false, `${gone} was left`);
    for (const kept of [live.dir, live.scratch, mine, ...others.map((n) => join(parent, n))])
      assert.equal(existsSync(kept), true, `${kept} was removed`);
    // The live process still finds its files.
    assert.equal(readFileSync(join(live.dir, 'file.yaml'), 'utf8'), 'a: 1\n');
    // A second sweep finds nothing more to do.
    assert.deepEqual(await removeStaleTempDirs(parent), []);
  });

  it('takes a reused pid with another start time for a dead owner', {
    skip: !hasProc && 'no /proc',
  }, async (t) => {
    // A restarted container's process often has the pid of the one that died (1); only the start differs.
    const parent = await parentDir(t);
    const { pid, start } = currentOwner();
    assert.notEqual(start, '0', 'the start time is read from /proc');
    const earlier = `mooring-artifact-${pid}-${BigInt(start) - 1n}-abcdef`;
    const unknownStart = `mooring-artifact-${pid}-0-abcdef`;
    const mine = basename(await mkdtemp(join(parent, ownedTempPrefix('fetch'))));
    for (const name of [earlier, unknownStart]) await mkdir(join(parent, name));
    assert.deepEqual(await removeStaleTempDirs(parent), [earlier]);
    assert.equal(existsSync(join(parent, unknownStart)), true, 'an unknown start time counts as alive');
    assert.equal(existsSync(join(parent, mine)), true);
  });

  it('never throws: a missing parent is skipped, and a stale file goes like a directory', async (t) => {
    assert.deepEqual(await removeStaleTempDirs(join(tmpdir(), 'owned-temp-test-does-not-exist')), []);
    const parent = await parentDir(t);
    await writeFile(join(parent, 'mooring-artifact-1-1-abcdef'), 'a file, not a directory');
    assert.deepEqual(await removeStaleTempDirs(parent, { isAlive: () => false }), [
      'mooring-artifact-1-1-abcdef',
    ]);
  });

  it('names directories after the owner and reads the names back', () => {
    const { pid, start } = currentOwner();
    assert.equal(ownedTempPrefix('artifact'), `mooring-artifact-${pid}-${start}-`);
    assert.throws(() => ownedTempPrefix('../x'), /lowercase letters/);
    assert.deepEqual(parseOwnedTempName(`mooring-artifact-${pid}-${start}-Ab12cD`), {
      kind: 'artifact',
      owner: { pid, start },
    });
    assert.deepEqual(parseOwnedTempName('.mooring-fetch-12-345-Ab12cD.extract-xY9z0Q'), {
      kind: 'fetch',
      owner: { pid: 12, start: '345' },
    });
    for (const name of [
      'mooring-artifact-Ab12cD',
      'mooring-fetch-test-Ab12cD',
      'mooring-artifact-1-2-Ab12cD/x',
    ])
      assert.equal(parseOwnedTempName(name), undefined, name);
    assert.equal(ownerAlive(currentOwner()), true);
  });
});
