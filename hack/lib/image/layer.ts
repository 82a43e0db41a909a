// One image layer from a directory: a tar made by GNU tar with every field that could differ
// between two builds fixed (entries sorted by name, one mtime, uid/gid 0 without names, no atime,
// ctime, ACLs or xattrs), gzip-compressed by Node's zlib with no name or time in its header. The
// same tree gives the same bytes, so the same digest.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createGzip } from 'node:zlib';

export interface Layer {
  /** The gzip-compressed tar: the blob. */
  data: Buffer;
  /** sha256 of the blob. */
  digest: string;
  /** sha256 of the uncompressed tar (the config's rootfs.diff_ids). */
  diffId: string;
  /** Bytes of the uncompressed tar. */
  uncompressedSize: number;
}

/** Tar arguments that make the archive depend on the tree's content only. */
export function reproducibleTarArgs(epochSeconds: number): string[] {
  return [
    '--sort=name',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    `--mtime=@${epochSeconds}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--no-acls',
    '--no-xattrs',
    '--no-selinux',
  ];
}

/** Packs `dir` (its content at the layer's root) into a layer; `extraArgs` e.g. `--mode=…`. */
export function layerFromDir(dir: string, epochSeconds: number, extraArgs: string[] = []): Promise<Layer> {
  return new Promise((resolve, reject) => {
    const tar = spawn(
      'tar',
      ['--create', '--file=-', ...reproducibleTarArgs(epochSeconds), ...extraArgs, '-C', dir, '.'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const diff = createHash('sha256');
    const blob = createHash('sha256');
    const gzip = createGzip({ level: 6 });
    const chunks: Buffer[] = [];
    let uncompressedSize = 0;
    let stderr = '';
    tar.stderr.on('data', (d: Buffer) => (stderr += d));
    tar.stdout.on('data', (d: Buffer) => {
      diff.update(d);
      uncompressedSize += d.length;
    });
    tar.stdout.pipe(gzip);
    gzip.on('data', (d: Buffer) => {
      blob.update(d);
      chunks.push(d);
    });
    tar.on('error', reject);
    let tarCode: number | null = null;
    tar.on('exit', (code) => (tarCode = code));
    gzip.on('end', () => {
      const finish = (): void => {
        if (tarCode !== 0) reject(new Error(`tar of ${dir} failed: ${stderr.trim()}`));
        else
          resolve({
            data: Buffer.concat(chunks),
            digest: `sha256:${blob.digest('hex')}`,
            diffId: `sha256:${diff.digest('hex')}`,
            uncompressedSize,
          });
      };
      if (tarCode === null) tar.once('exit', finish);
      else finish();
    });
  });
}
