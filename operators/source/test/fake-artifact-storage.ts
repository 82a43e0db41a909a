// A fake ArtifactStorage, for the unit tests of the source steps only (the steps.unit.test.ts of
// each kind under src/steps/): artifacts live in memory, so a test can say what storage holds, what
// a pack step put in it and what gc was asked to keep, without a storage folder or a server. The
// real ArtifactStorage (shared/artifact, tested there and by src/steps/steps.test.ts) packs,
// verifies and collects on disk; the integration tests beside this file use it, with the real API
// server.
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { ArtifactRef, ArtifactStorage, PackOptions, StoredArtifact } from '@mooring/artifact';

/** What one `archive` or `storeFile` call stored. */
export interface FakeStored extends StoredArtifact {
  ref: ArtifactRef;
  /** The packed directory's files (POSIX paths, sorted) after the filter; for `storeFile`, the file. */
  files: string[];
}

async function walk(root: string, filter: PackOptions['filter']): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, entry.name);
      const rel = relative(root, abs).split(sep).join('/');
      if (filter?.(rel, entry.isDirectory())) continue;
      if (entry.isDirectory()) await visit(abs);
      else out.push(rel);
    }
  };
  await visit(root);
  return out.sort();
}

export class FakeArtifactStorage {
  readonly advertisedBase: string;
  /** What storage holds, by path; a test deletes an entry to lose a file, or changes its digest to corrupt it. */
  readonly files = new Map<string, FakeStored>();
  /** Every gc call: the object and the path it was told to keep. */
  readonly gcCalls: { ref: ArtifactRef; keep: string }[] = [];
  /** Thrown by the next `archive` or `storeFile`, then cleared (a full disk, an artifact over the limit). */
  failNext: Error | undefined;
  #seq = 0;

  constructor(advertisedBase = 'http://source.mooring-system.svc') {
    this.advertisedBase = advertisedBase;
  }

  /** This fake where the steps expect the real storage; only the methods below are there. */
  get asStorage(): ArtifactStorage {
    return this as unknown as ArtifactStorage;
  }

  urlFor(path: string): string {
    return `${this.advertisedBase}/${path}`;
  }

  /** Puts an artifact in storage as if an earlier reconcile had stored it. */
  seed(ref: ArtifactRef, files: string[] = ['a.yaml']): FakeStored {
    return this.#store(ref, files);
  }

  async archive(ref: ArtifactRef, dir: string, options?: PackOptions): Promise<StoredArtifact> {
    this.#failIfAsked();
    return this.#public(this.#store(ref, await walk(dir, options?.filter)));
  }

  async storeFile(ref: ArtifactRef, file: string): Promise<StoredArtifact> {
    this.#failIfAsked();
    return this.#public(this.#store(ref, [file.split(sep).pop() ?? file]));
  }

  async storeCopy(
    ref: ArtifactRef,
    from: Pick<StoredArtifact, 'path' | 'digest'>,
  ): Promise<StoredArtifact | undefined> {
    const source = this.files.get(from.path);
    if (source?.digest !== from.digest) return undefined;
    const copy: FakeStored = {
      ...source,
      ref,
      path: `${ref.kind.toLowerCase()}/${ref.namespace}/${ref.name}/${from.path.split('/').pop()}`,
    };
    copy.url = this.urlFor(copy.path);
    this.files.set(copy.path, copy);
    return this.#public(copy);
  }

  async verify(artifact: Pick<StoredArtifact, 'path' | 'digest'>): Promise<boolean> {
    return this.files.get(artifact.path)?.digest === artifact.digest;
  }

  /** Records the call and removes nothing: which old artifacts go is the real storage's to decide. */
  async gc(ref: ArtifactRef, keep: Pick<StoredArtifact, 'path'>): Promise<string[]> {
    this.gcCalls.push({ ref, keep: keep.path });
    return [];
  }

  async remove(ref: ArtifactRef): Promise<void> {
    const prefix = `${ref.kind.toLowerCase()}/${ref.namespace}/${ref.name}/`;
    for (const p of [...this.files.keys()]) if (p.startsWith(prefix)) this.files.delete(p);
  }

  #failIfAsked(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
  }

  #store(ref: ArtifactRef, files: string[]): FakeStored {
    const n = ++this.#seq;
    const hex = n.toString(16).padStart(64, '0');
    const path = `${ref.kind.toLowerCase()}/${ref.namespace}/${ref.name}/${hex}.tar.gz`;
    const stored: FakeStored = {
      ref,
      files,
      path,
      url: this.urlFor(path),
      digest: `sha256:${hex}`,
      size: 100 * n,
      lastUpdateTime: '2026-01-01T00:00:00Z',
    };
    this.files.set(path, stored);
    return stored;
  }

  #public({ ref: _ref, files: _files, ...artifact }: FakeStored): StoredArtifact {
    return artifact;
  }
}
