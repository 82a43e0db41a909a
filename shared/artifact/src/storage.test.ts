import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { InvalidArtifactRefError } from './errors.ts';
import { type ArtifactRef, ArtifactStorage, type StoredArtifact } from './storage.ts';

const ref: ArtifactRef = { kind: 'GitRepository', namespace: 'flux-system', name: 'podinfo' };

async function setup(t: TestContext, options: { retentionRecords?: number; retentionTtlMs?: number } = {}) {
  const base = await mkdtemp(join(tmpdir(), 'mooring-storage-test-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  let clock = Date.parse('2026-01-02T03:04:05.678Z');
  const storage = new ArtifactStorage({
    root: join(base, 'data'),
    advertisedBase: 'http://source.mooring-system.svc/',
    now: () => new Date(clock),
    ...options,
  });
  const tick = (ms: number) => {
    clock += ms;
  };
  /** Writes a small source tree whose content depends on `tag`. */
  const tree = async (tag: string) => {
    const dir = join(base, `src-${tag}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'app.yaml'), `tag: ${tag}\n`);
    return dir;
  };
  return { base, storage, tick, tree };
}

const names = async (storage: ArtifactStorage) => (await readdir(storage.dirFor(ref))).sort();
const fileOf = (a: StoredArtifact) => a.path.split('/')[3]!;

describe('ArtifactStorage', () => {
  it("stores a copy of another object's artifact under its own folder, and refuses one that is gone or changed", async (t) => {
    const { storage, tree } = await setup(t);
    const original = await storage.archive(ref, await tree('a'));
    const other: ArtifactRef = { kind: 'OCIRepository', namespace: 'flux-system', name: 'copy' };
    const copy = await storage.storeCopy(other, original);
    assert.ok(copy);
    assert.equal(copy.digest, original.digest);
    assert.equal(copy.path, `ocirepository/flux-system/copy/${fileOf(original)}`);
    assert.ok(await storage.verify(copy));
    // Changed since it was recorded: the copy's own hash disagrees, nothing is stored.
    await writeFile(storage.resolveArtifactPath(original.path), 'tampered');
    const third: ArtifactRef = { ...other, name: 'third' };
    assert.equal(await storage.storeCopy(third, original), undefined);
    assert.deepEqual(
      (await readdir(storage.dirFor(third))).filter((f) => !f.startsWith('.')),
      [],
    );
    await rm(storage.resolveArtifactPath(original.path));
    assert.equal(await storage.storeCopy(third, original), undefined);
    assert.equal(
      await storage.storeCopy(third, { path: '../../etc/passwd', digest: original.digest }),
      undefined,
    );
  });

  it('archives a directory at its content address with the status fields filled in', async (t) => {
    const { storage, tree } = await setup(t);
    const art = await storage.archive(ref, await tree('v1'));
    const bytes = await readFile(join(storage.root, art.path));
    const hex = createHash('sha256').update(bytes).digest('hex');
    assert.deepEqual(art, {
      path: `gitrepository/flux-system/podinfo/${hex}.tar.gz`,
      url: `http://source.mooring-system.svc/gitrepository/flux-system/podinfo/${hex}.tar.gz`,
      digest: `sha256:${hex}`,
      size: bytes.length,
      lastUpdateTime: '2026-01-02T03:04:05Z',
    });
    assert.deepEqual(await names(storage), [`${hex}.tar.gz`], 'no temp file is left behind');
    assert.equal(await storage.verify(art), true);
  });

  it('keeps the existing file when the same content is archived again', async (t) => {
    const { storage, tree, tick } = await setup(t);
    const first = await storage.archive(ref, await tree('v1'));
    const before = await stat(join(storage.root, first.path));
    tick(5000);
    const again = await storage.archive(ref, await tree('v1'));
    assert.equal(again.path, first.path);
    assert.equal((await stat(join(storage.root, again.path))).ino, before.ino, 'the file was not replaced');
    assert.equal(again.lastUpdateTime, '2026-01-02T03:04:10Z');
    assert.equal((await names(storage)).length, 1);
  });

  it('stores an existing tar.gz byte for byte under the sha256 of its bytes', async (t) => {
    const { base, storage } = await setup(t);
    const layer = join(base, 'layer.tar.gz');
    await writeFile(layer, Buffer.from('not really gzip, stored as-is'));
    const art = await storage.storeFile(ref, layer);
    const hex = createHash('sha256').update('not really gzip, stored as-is').digest('hex');
    assert.equal(art.digest, `sha256:${hex}`);
    assert.equal(art.size, 29);
    assert.equal(await readFile(join(storage.root, art.path), 'utf8'), 'not really gzip, stored as-is');
  });

  it('verify is false for a tampered, missing or out-of-root artifact', async (t) => {
    const { storage, tree } = await setup(t);
    const art = await storage.archive(ref, await tree('v1'));
    await writeFile(join(storage.root, art.path), 'tampered');
    assert.equal(await storage.verify(art), false);
    await rm(join(storage.root, art.path));
    assert.equal(await storage.verify(art), false);
    assert.equal(await storage.verify({ ...art, path: `../../etc/${fileOf(art)}` }), false);
  });

  it('verify is false when the artifact file is a symlink', async (t) => {
    const { base, storage, tree } = await setup(t);
    const art = await storage.archive(ref, await tree('v1'));
    const real = join(base, 'elsewhere.tar.gz');
    await writeFile(real, await readFile(join(storage.root, art.path)));
    await rm(join(storage.root, art.path));
    await symlink(real, join(storage.root, art.path));
    assert.equal(await storage.verify(art), false);
  });

  it('gc keeps the current artifact and at most N newest files', async (t) => {
    const { storage, tree, tick } = await setup(t, { retentionRecords: 2, retentionTtlMs: 3_600_000 });
    const arts: StoredArtifact[] = [];
    for (const tag of ['a', 'b', 'c', 'd']) {
      arts.push(await storage.archive(ref, await tree(tag)));
      tick(1000);
    }
    // The current one is the oldest (a rollback to the first revision): it still stays.
    const removed = await storage.gc(ref, arts[0]!);
    assert.deepEqual(removed.sort(), [arts[1]!.path, arts[2]!.path].sort());
    assert.deepEqual(await names(storage), [fileOf(arts[0]!), fileOf(arts[3]!)].sort());
  });

  it('gc removes non-current files older than the TTL even under the record limit', async (t) => {
    const { storage, tree, tick } = await setup(t, { retentionRecords: 5, retentionTtlMs: 60_000 });
    const old = await storage.archive(ref, await tree('old'));
    tick(61_000);
    const current = await storage.archive(ref, await tree('new'));
    assert.deepEqual(await storage.gc(ref, current), [old.path]);
    tick(600_000);
    assert.deepEqual(await storage.gc(ref, current), [], 'the current artifact never expires');
    assert.deepEqual(await names(storage), [fileOf(current)]);
  });

  it('gc leaves young temp files, lock files and symlinks alone and removes stale temp files', async (t) => {
    const { storage, tree, tick } = await setup(t);
    const current = await storage.archive(ref, await tree('v1'));
    const dir = storage.dirFor(ref);
    await writeFile(join(dir, '.tmp-young.tar.gz'), 'x');
    await writeFile(join(dir, '.tmp-stale.tar.gz'), 'x');
    await writeFile(join(dir, `${fileOf(current)}.lock`), '');
    await symlink(fileOf(current), join(dir, 'latest.tar.gz'));
    const stale = new Date(Date.parse('2026-01-02T03:04:05Z') - 120_000);
    await utimes(join(dir, '.tmp-stale.tar.gz'), stale, stale);
    tick(1000);
    assert.deepEqual(await storage.gc(ref, current), [`gitrepository/flux-system/podinfo/.tmp-stale.tar.gz`]);
    assert.ok(existsSync(join(dir, '.tmp-young.tar.gz')));
    assert.ok(existsSync(join(dir, 'latest.tar.gz')));
  });

  it('remove deletes the whole folder of an object and nothing else', async (t) => {
    const { storage, tree } = await setup(t);
    const other = { ...ref, name: 'other' };
    await storage.archive(ref, await tree('v1'));
    await storage.archive(other, await tree('v1'));
    await storage.remove(ref);
    assert.equal(existsSync(storage.dirFor(ref)), false);
    assert.equal((await readdir(storage.dirFor(other))).length, 1);
    await storage.remove(ref); // idempotent, for finalizers that run twice
  });

  it('rejects kinds, namespaces and names that would leave the root', async (t) => {
    const { storage, tree } = await setup(t);
    const src = await tree('v1');
    const bad: ArtifactRef[] = [
      { ...ref, name: '..' },
      { ...ref, name: '../../etc' },
      { ...ref, name: 'a/b' },
      { ...ref, namespace: '..' },
      { ...ref, namespace: '' },
      { ...ref, kind: '../x' },
      { ...ref, name: '.hidden' },
      { ...ref, name: 'x'.repeat(254) },
    ];
    for (const r of bad) {
      await assert.rejects(storage.archive(r, src), InvalidArtifactRefError, JSON.stringify(r));
    }
    assert.equal(existsSync(storage.root), false, 'nothing was created');
  });
});
