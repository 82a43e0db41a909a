import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, rename, rm, stat, unlink, utimes } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { hashFile } from './digest.ts';
import { InvalidArtifactRefError } from './errors.ts';
import { type PackOptions, packDirectory } from './pack.ts';

/** The object an artifact belongs to. */
export interface ArtifactRef {
  /** Kubernetes kind, e.g. `GitRepository`; stored lower-cased. */
  kind: string;
  namespace: string;
  name: string;
}

/** A stored artifact: what goes into `status.artifact` (the source operator adds revision and metadata). */
export interface StoredArtifact {
  /** `<kind>/<namespace>/<name>/<hex>.tar.gz`, relative to the storage root. */
  path: string;
  /** Where consumers fetch it: `<advertisedBase>/<path>`. */
  url: string;
  /** `sha256:<hex>` of the file's bytes. */
  digest: string;
  /** File size in bytes. */
  size: number;
  /** RFC3339, seconds precision (as Kubernetes' metav1.Time serialises). */
  lastUpdateTime: string;
}

/** Options for {@link ArtifactStorage}. */
export interface ArtifactStorageOptions {
  /** Directory holding all artifacts; created when missing. */
  root: string;
  /** Base URL consumers reach the artifact server at, e.g. `http://source.mooring-system.svc`. */
  advertisedBase: string;
  /** Most artifact files kept per object, the current one included (Flux `--artifact-retention-records`). */
  retentionRecords?: number;
  /** Non-current files older than this are removed (Flux `--artifact-retention-ttl`). */
  retentionTtlMs?: number;
  /** Clock, replaceable in tests. */
  now?: () => Date;
}

const KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
// DNS-1123 label (namespaces) and subdomain (names): no slashes, no "..", no leading dot.
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const ARTIFACT_FILE = /^[0-9a-f]{64}\.tar\.gz$/;
const TEMP_PREFIX = '.tmp-';
/** Temp files younger than this may belong to a write in flight and are left alone by gc. */
const TEMP_GRACE_MS = 60_000;

/**
 * Content-addressed artifact store on a local directory, laid out as Flux's source-controller does:
 * `<root>/<kind>/<namespace>/<name>/<sha256 hex>.tar.gz`, written atomically, collected by age and count.
 */
export class ArtifactStorage {
  readonly root: string;
  readonly advertisedBase: string;
  readonly retentionRecords: number;
  readonly retentionTtlMs: number;
  private readonly now: () => Date;

  constructor(options: ArtifactStorageOptions) {
    this.root = resolve(options.root);
    this.advertisedBase = options.advertisedBase.replace(/\/+$/, '');
    this.retentionRecords = options.retentionRecords ?? 2;
    this.retentionTtlMs = options.retentionTtlMs ?? 60_000;
    this.now = options.now ?? (() => new Date());
    if (!Number.isSafeInteger(this.retentionRecords) || this.retentionRecords < 1) {
      throw new RangeError(`retentionRecords must be a positive integer, got ${options.retentionRecords}`);
    }
  }

  /** The folder of an object's artifacts, relative to the root (POSIX); validates the reference. */
  relativeDir(ref: ArtifactRef): string {
    if (!KIND.test(ref.kind))
      throw new InvalidArtifactRefError(`invalid artifact kind ${JSON.stringify(ref.kind)}`);
    if (!LABEL.test(ref.namespace)) {
      throw new InvalidArtifactRefError(`invalid artifact namespace ${JSON.stringify(ref.namespace)}`);
    }
    if (ref.name.length > 253 || !SUBDOMAIN.test(ref.name)) {
      throw new InvalidArtifactRefError(`invalid artifact name ${JSON.stringify(ref.name)}`);
    }
    return `${ref.kind.toLowerCase()}/${ref.namespace}/${ref.name}`;
  }

  /** Absolute folder of an object's artifacts, checked to be strictly inside the root. */
  dirFor(ref: ArtifactRef): string {
    return this.inside(this.relativeDir(ref));
  }

  /** The public URL of a storage-relative path. */
  urlFor(path: string): string {
    return `${this.advertisedBase}/${path.split('/').map(encodeURIComponent).join('/')}`;
  }

  /** Packs `dir` deterministically and stores it under its digest; an identical existing file is kept. */
  async archive(ref: ArtifactRef, dir: string, packOptions?: PackOptions): Promise<StoredArtifact> {
    const folder = this.dirFor(ref);
    await mkdir(folder, { recursive: true });
    const temp = this.tempPath(folder);
    try {
      const packed = await packDirectory(dir, temp, packOptions);
      return await this.commit(ref, folder, temp, packed.digest.slice('sha256:'.length), packed.size);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** Stores an existing tar.gz as-is (e.g. a raw OCI layer), addressed by the sha256 of its bytes. */
  async storeFile(ref: ArtifactRef, file: string): Promise<StoredArtifact> {
    return (await this.copyIn(ref, file))!;
  }

  /**
   * Stores a copy of another object's stored artifact for `ref`, as if packed again: the same bytes
   * under the same digest. Undefined when `from` is gone or its bytes no longer match its digest
   * (collected, replaced or damaged since), so the caller builds it the long way.
   */
  async storeCopy(
    ref: ArtifactRef,
    from: Pick<StoredArtifact, 'path' | 'digest'>,
  ): Promise<StoredArtifact | undefined> {
    let source: string;
    try {
      source = this.resolveArtifactPath(from.path);
    } catch {
      return undefined;
    }
    try {
      return await this.copyIn(ref, source, from.digest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** True when the artifact's file exists as a regular file and its bytes match `artifact.digest`. */
  async verify(artifact: Pick<StoredArtifact, 'path' | 'digest'>): Promise<boolean> {
    let abs: string;
    try {
      abs = this.resolveArtifactPath(artifact.path);
    } catch {
      return false;
    }
    try {
      const st = await lstat(abs);
      if (!st.isFile()) return false;
      const { hex } = await hashFile(abs);
      return artifact.digest === `sha256:${hex}`;
    } catch {
      return false;
    }
  }

  /**
   * Removes old artifact files of an object, as Flux does: never `keep`; non-current files older than the
   * TTL; then the oldest until at most `retentionRecords` files remain. Stale temp files (older than a
   * minute) go too. Returns the removed storage-relative paths.
   */
  async gc(ref: ArtifactRef, keep: Pick<StoredArtifact, 'path'>): Promise<string[]> {
    const rel = this.relativeDir(ref);
    const folder = this.inside(rel);
    const keepName = keep.path.startsWith(`${rel}/`) ? keep.path.slice(rel.length + 1) : '';
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const now = this.now().getTime();
    const doomed: string[] = [];
    const artifacts: { name: string; mtime: number }[] = [];
    for (const name of names) {
      const st = await lstat(join(folder, name)).catch(() => undefined);
      // Symlinks, folders and lock files are not artifacts (Flux skips them when counting).
      if (!st?.isFile() || name.endsWith('.lock')) continue;
      const age = now - st.mtimeMs;
      if (name.startsWith(TEMP_PREFIX)) {
        if (age > TEMP_GRACE_MS) doomed.push(name);
        continue;
      }
      if (name === keepName) {
        artifacts.push({ name, mtime: Number.POSITIVE_INFINITY });
        continue;
      }
      if (age > this.retentionTtlMs) doomed.push(name);
      else artifacts.push({ name, mtime: st.mtimeMs });
    }
    // Newest first; the current artifact sorts first whatever its age.
    artifacts.sort((a, b) => b.mtime - a.mtime || (a.name < b.name ? -1 : 1));
    for (const extra of artifacts.slice(this.retentionRecords)) doomed.push(extra.name);

    const removed: string[] = [];
    for (const name of doomed.sort()) {
      try {
        await unlink(join(folder, name));
        removed.push(`${rel}/${name}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return removed;
  }

  /** Removes every artifact of an object (its whole folder), for finalizers. */
  async remove(ref: ArtifactRef): Promise<void> {
    await rm(this.dirFor(ref), { recursive: true, force: true });
  }

  /** Absolute path of a stored artifact's storage-relative path, validated to stay inside the root. */
  resolveArtifactPath(path: string): string {
    const parts = path.split('/');
    if (parts.length !== 4 || !ARTIFACT_FILE.test(parts[3]!)) {
      throw new InvalidArtifactRefError(`invalid artifact path ${JSON.stringify(path)}`);
    }
    const [kind, namespace, name] = parts as [string, string, string, string];
    if (kind !== kind.toLowerCase())
      throw new InvalidArtifactRefError(`invalid artifact path ${JSON.stringify(path)}`);
    return join(this.inside(this.relativeDir({ kind, namespace, name })), parts[3]!);
  }

  private inside(rel: string): string {
    const abs = resolve(this.root, rel);
    if (!abs.startsWith(this.root + sep)) {
      throw new InvalidArtifactRefError(`artifact path ${JSON.stringify(rel)} escapes the storage root`);
    }
    return abs;
  }

  /**
   * Copies `file` into `ref`'s folder at its content address. Copy first, then hash the copy: the
   * hash then describes exactly the bytes that get renamed in. With `digest`, a copy whose bytes
   * hash otherwise is refused (undefined) and nothing is stored.
   */
  private async copyIn(ref: ArtifactRef, file: string, digest?: string): Promise<StoredArtifact | undefined> {
    const folder = this.dirFor(ref);
    await mkdir(folder, { recursive: true });
    const temp = this.tempPath(folder);
    try {
      await copyFile(file, temp, constants.COPYFILE_EXCL);
      const { hex, size } = await hashFile(temp);
      if (digest !== undefined && digest !== `sha256:${hex}`) return undefined;
      return await this.commit(ref, folder, temp, hex, size);
    } finally {
      await rm(temp, { force: true });
    }
  }

  private tempPath(folder: string): string {
    return join(folder, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}.tar.gz`);
  }

  /** Moves a finished temp file to its content address (or keeps the identical file already there). */
  private async commit(
    ref: ArtifactRef,
    folder: string,
    temp: string,
    hex: string,
    size: number,
  ): Promise<StoredArtifact> {
    const fileName = `${hex}.tar.gz`;
    const final = join(folder, fileName);
    const now = this.now();
    const existing = await lstat(final).catch(() => undefined);
    if (existing?.isFile()) {
      // Same name, same bytes. Touch it so retention counts it as the newest file.
      await utimes(final, now, now);
    } else {
      if (existing) await rm(final, { recursive: true, force: true });
      await rename(temp, final);
      await utimes(final, now, now);
    }
    const path = `${this.relativeDir(ref)}/${fileName}`;
    const st = await stat(final);
    if (st.size !== size) throw new Error(`stored artifact ${path} has ${st.size} bytes, expected ${size}`);
    return {
      path,
      url: this.urlFor(path),
      digest: `sha256:${hex}`,
      size,
      lastUpdateTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
  }
}
