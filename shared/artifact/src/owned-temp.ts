import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary directories named after the process that made them, so a later process can tell the
 * ones a dead process left behind (SIGKILL, OOM kill: no `finally` ran) from those still in use.
 *
 * The owner is the pid plus the process's start time (Linux: `/proc/<pid>/stat` field 22, clock
 * ticks since boot). The pid alone is not enough: a restarted container's process usually gets the
 * same pid (often 1) as the one that died, while the operators' /tmp is an emptyDir that outlives
 * the container. Without /proc the start is recorded as 0 and only the pid is checked.
 *
 * Pids are only comparable within one PID namespace: a temp directory shared by processes in
 * different ones (two containers on one emptyDir) would make each see the other's as stale, so each
 * process needs a temp directory of its own, as the operators' manifests give them.
 *
 * Names: `mooring-<kind>-<pid>-<start>-XXXXXX` (mkdtemp's suffix), and the extraction scratch next
 * to one, `.mooring-<kind>-<pid>-<start>-XXXXXX.extract-XXXXXX`.
 */

/** The kinds `fetchArtifact` creates: its download dir and the extracted artifact. */
export const ARTIFACT_TEMP_KINDS = ['fetch', 'artifact'] as const;

export interface TempOwner {
  pid: number;
  /** Start time as the kernel counts it; `0` when unknown. */
  start: string;
}

const PROC = '/proc';

/** The start time of `pid`, undefined when no such process is visible; `0` without /proc. */
function startOf(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${PROC}/${pid}/stat`, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return hasProc() ? undefined : kill0(pid);
    return '0'; // unreadable (EACCES under hidepid): cannot judge, so alive
  }
  // Field 2 (the command) is in parentheses and may hold spaces; fields 3.. follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[22 - 3] ?? '0';
}

let procChecked: boolean | undefined;
function hasProc(): boolean {
  if (procChecked === undefined) {
    try {
      readFileSync(`${PROC}/self/stat`);
      procChecked = true;
    } catch {
      procChecked = false;
    }
  }
  return procChecked;
}

/** Without /proc: signal 0 says whether the pid exists (EPERM: it does, someone else's). */
function kill0(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
    return '0';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? '0' : undefined;
  }
}

let self: TempOwner | undefined;
/** This process as it appears in the names of its temp directories. */
export function currentOwner(): TempOwner {
  self ??= { pid: process.pid, start: (hasProc() ? startOf(process.pid) : undefined) ?? '0' };
  return self;
}

/** True while the process that made a directory may still use it; unknown owners count as alive. */
export function ownerAlive(owner: TempOwner): boolean {
  const start = startOf(owner.pid);
  if (start === undefined) return false;
  return start === '0' || owner.start === '0' || start === owner.start;
}

/** The `mkdtemp` prefix for a directory of `kind` owned by this process: `mooring-<kind>-<pid>-<start>-`. */
export function ownedTempPrefix(kind: string): string {
  if (!/^[a-z]+$/.test(kind))
    throw new Error(`temp directory kind ${JSON.stringify(kind)} must be lowercase letters`);
  const { pid, start } = currentOwner();
  return `mooring-${kind}-${pid}-${start}-`;
}

const OWNED = /^\.?mooring-([a-z]+)-(\d+)-(\d+)-[A-Za-z0-9]{6}(?:\.extract-[A-Za-z0-9]{6})?$/;

/** The kind and owner of a name `ownedTempPrefix` (or extraction next to one) made, else undefined. */
export function parseOwnedTempName(name: string): { kind: string; owner: TempOwner } | undefined {
  const m = OWNED.exec(name);
  if (!m) return undefined;
  return { kind: m[1]!, owner: { pid: Number(m[2]), start: m[3]! } };
}

export interface RemoveStaleOptions {
  /** Only names of these kinds are considered; default {@link ARTIFACT_TEMP_KINDS}. */
  kinds?: readonly string[];
  /** Replaces the liveness check (tests). */
  isAlive?: (owner: TempOwner) => boolean;
}

/**
 * Removes the directories of `kinds` in `parent` (default: the OS temp dir) whose owning process is
 * gone; resolves to the names removed. Never throws: an unreadable parent or an entry that cannot
 * be removed (another user's, under /tmp's sticky bit) is skipped.
 */
export async function removeStaleTempDirs(
  parent: string = tmpdir(),
  options: RemoveStaleOptions = {},
): Promise<string[]> {
  const kinds = new Set(options.kinds ?? ARTIFACT_TEMP_KINDS);
  const isAlive = options.isAlive ?? ownerAlive;
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const verdicts = new Map<string, boolean>();
  const removed: string[] = [];
  for (const name of names) {
    const parsed = parseOwnedTempName(name);
    if (!parsed || !kinds.has(parsed.kind)) continue;
    const key = `${parsed.owner.pid}-${parsed.owner.start}`;
    let alive = verdicts.get(key);
    if (alive === undefined) {
      alive = isAlive(parsed.owner);
      verdicts.set(key, alive);
    }
    if (alive) continue;
    try {
      await rm(join(parent, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // someone else's, or already going: not ours to insist on
    }
  }
  return removed;
}

const swept = new Map<string, Promise<string[]>>();

/**
 * {@link removeStaleTempDirs} once per process and parent directory: the first use after a start
 * reclaims what a crashed predecessor left, later calls reuse that result.
 */
export function removeStaleTempDirsOnce(parent: string = tmpdir()): Promise<string[]> {
  let done = swept.get(parent);
  if (!done) {
    done = removeStaleTempDirs(parent);
    swept.set(parent, done);
  }
  return done;
}
