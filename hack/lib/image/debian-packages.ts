// The operator image's Debian part, distroless-style: the packages the operators run at run time
// (git and ssh for Git sources, CA certificates, tini as PID 1, the C++ runtime Node links) and
// the libraries they link, each unpacked as it is, no maintainer script run, no dpkg, shell or
// perl. hack/lib/image/debian.lock.json pins every package by version and sha256 (`hack/image lock`
// writes it from the apt sources of this machine); a build downloads exactly those with apt.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** What the image needs from Debian; their dependencies are added (less DENIED). */
export const ROOT_PACKAGES = [
  'base-files',
  'netbase',
  'ca-certificates',
  'git',
  'openssh-client',
  'tini',
  'libstdc++6',
];

// Install-time machinery and what only it needs: never run in the image, so never shipped.
// git's perl (for git-svn, add --interactive and the like) and its manual pages go too.
const DENIED = new Set([
  'adduser',
  'awk',
  'cdebconf',
  'debconf',
  'debconf-2.0',
  'dpkg',
  'install-info',
  'passwd',
  'perl',
  'perl-base',
  'perl-modules-5.36',
  'libperl5.36',
  'liberror-perl',
  'git-man',
  'openssl',
  'tar',
]);

export interface LockedPackage {
  name: string;
  version: string;
  architecture: string;
  /** Of the .deb file, as the archive's Packages index lists it. */
  sha256: string;
  /** The pool path, for the SBOM's download location. */
  filename: string;
  /** The source package, for the SBOM (often the same name). */
  source: string;
}

export interface DebianLock {
  /** The apt sources the lock was resolved from (informational). */
  sources: string;
  packages: LockedPackage[];
}

function run(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${cmd} could not start (${r.error.message}); install it (Debian: apt)`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.trim().slice(-800)}`);
  return r.stdout;
}

/** The dependency groups of each package in `names` (each group: alternatives, virtuals expanded). */
function dependencyGroups(names: string[]): Map<string, string[][]> {
  const out = run('apt-cache', [
    'depends',
    '--no-recommends',
    '--no-suggests',
    '--no-conflicts',
    '--no-breaks',
    '--no-replaces',
    '--no-enhances',
    ...names,
  ]);
  const groups = new Map<string, string[][]>();
  let current: string[][] = [];
  let alternatives: string[] = [];
  let virtual = false;
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    if (!line.startsWith(' ')) {
      current = [];
      groups.set(line.trim(), current);
      continue;
    }
    const dep = /^ {2}(\|?)(?:Pre)?Depends: (<?)([^>\s]+)>?$/.exec(line);
    if (dep) {
      alternatives.push(dep[3]!);
      virtual = dep[2] === '<';
      // `|Depends:` says the next line is an alternative of this one.
      if (dep[1] !== '|') {
        current.push(alternatives);
        alternatives = [];
      }
      continue;
    }
    // A provider of the virtual package just listed.
    if (virtual && /^ {4}\S/.test(line)) current.at(-1)?.push(line.trim());
  }
  return groups;
}

/** ROOT_PACKAGES and what they depend on, each dependency by its first alternative not denied. */
export function resolvePackages(): string[] {
  const chosen = new Set<string>(ROOT_PACKAGES);
  let level = [...ROOT_PACKAGES];
  while (level.length > 0) {
    const next: string[] = [];
    for (const groups of dependencyGroups(level).values())
      for (const group of groups) {
        if (group.some((p) => DENIED.has(p))) continue;
        const pick = group.find((p) => !DENIED.has(p));
        if (pick && !chosen.has(pick)) {
          chosen.add(pick);
          next.push(pick);
        }
      }
    level = next;
  }
  return [...chosen].sort();
}

/** Each package's candidate version and checksum from this machine's apt lists. */
export function lockPackages(names: string[]): LockedPackage[] {
  const fields = (block: string, key: string): string =>
    new RegExp(`^${key}: (.*)$`, 'm').exec(block)?.[1]?.trim() ?? '';
  return names.map((name) => {
    const block = run('apt-cache', ['show', '--no-all-versions', name]);
    const source = fields(block, 'Source').split(' ')[0] || name;
    return {
      name,
      version: fields(block, 'Version'),
      architecture: fields(block, 'Architecture'),
      sha256: fields(block, 'SHA256'),
      filename: fields(block, 'Filename'),
      source,
    };
  });
}

function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The locked .debs in `cacheDir` (downloaded with `apt-get download` when absent), each checked by sha256. */
export function fetchPackages(lock: DebianLock, cacheDir: string): Map<string, string> {
  mkdirSync(cacheDir, { recursive: true });
  const files = new Map<string, string>();
  for (const p of lock.packages) {
    const file = join(cacheDir, `${p.name}_${p.version.replace(':', '%3a')}_${p.architecture}.deb`);
    if (!existsSync(file) || sha256File(file) !== p.sha256) {
      const tmp = join(cacheDir, `.download-${process.pid}`);
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp);
      const r = spawnSync('apt-get', ['download', '-qq', `${p.name}=${p.version}`], {
        cwd: tmp,
        encoding: 'utf8',
      });
      const got = r.status === 0 ? readdirSync(tmp).find((f) => f.endsWith('.deb')) : undefined;
      if (!got) {
        rmSync(tmp, { recursive: true, force: true });
        throw new Error(
          `apt could not download Debian package ${p.name}=${p.version} (${(r.stderr ?? '').trim().slice(-300)}): run apt-get update, or 'hack/image lock' if the archive no longer has that version`,
        );
      }
      renameSync(join(tmp, got), file);
      rmSync(tmp, { recursive: true, force: true });
      const actual = sha256File(file);
      if (actual !== p.sha256) {
        rmSync(file);
        throw new Error(
          `Debian package ${p.name}=${p.version} has sha256 ${actual}, not ${p.sha256} as the lock says`,
        );
      }
    }
    files.set(p.name, file);
  }
  return files;
}

/** Unpacks each .deb's files into `root` (merged /usr, as bookworm lays it out); no script runs. */
export function unpackPackages(debs: Iterable<string>, root: string): void {
  for (const deb of debs) {
    // dpkg-deb hands over the data tar; tar keeps /bin, /lib… the symlinks into /usr they are.
    const r = spawnSync(
      'sh',
      [
        '-c',
        'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" --keep-directory-symlink --no-same-owner',
        'unpack',
        deb,
        root,
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`unpacking ${deb} failed: ${r.stderr.trim().slice(-500)}`);
  }
}
