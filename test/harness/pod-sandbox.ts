import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a pod's container would see: its command, env, service-account files and writable mounts. */
export interface PodSpecLike {
  /** Working directory inside the sandbox (the image's WORKDIR); must be under a read-only bind. */
  workdir: string;
  command: string[];
  env: Record<string, string>;
  /** The files kubelet projects to /var/run/secrets/kubernetes.io/serviceaccount. */
  serviceAccount?: { token: string; caCrt: string; namespace: string };
  /** Paths that get an empty writable tmpfs, as emptyDir volumes do (e.g. /tmp, /data). */
  emptyDirs: string[];
  /** Host directories bound read-only into the sandbox (the "image"): sandbox path → host path. */
  readOnly: Record<string, string>;
  uid: number;
}

// The script runs in a private mount namespace, so every mount disappears with the process.
// It builds a root on a tmpfs, binds the "image" read-only, gives each emptyDir a tmpfs, makes
// the root itself read-only, then drops to the pod's uid with no privileges left.
const SCRIPT = `set -eu
root=$1; sa=$2; workdir=$3; uid=$4; empty=$5; shift 5
mount -t tmpfs -o mode=0755 tmpfs "$root"
# Pairs of (sandbox path, host path) up to a lone "--"; the command follows.
while [ "$1" != -- ]; do
  mkdir -p "$root$1"; mount --rbind "$2" "$root$1"; mount -o remount,bind,ro "$root$1"; shift 2
done
shift
for l in bin lib lib64 sbin; do [ -L "/$l" ] && ln -s "$(readlink "/$l")" "$root/$l"; done
mkdir -p "$root/dev" "$root/proc" "$root/var/run/secrets/kubernetes.io/serviceaccount"
mount --rbind /dev "$root/dev"; mount --rbind /proc "$root/proc"
for d in $empty; do mkdir -p "$root$d"; mount -t tmpfs -o mode=1777 tmpfs "$root$d"; done
if [ -n "$sa" ]; then cp "$sa"/* "$root/var/run/secrets/kubernetes.io/serviceaccount/"; chmod 0444 "$root"/var/run/secrets/kubernetes.io/serviceaccount/*; fi
mount -o remount,ro "$root"
exec chroot "$root" setpriv --reuid "$uid" --regid "$uid" --clear-groups --no-new-privs --inh-caps=-all sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"`;

/** True when this process can build the sandbox: root, with unshare, chroot and setpriv. */
export function podSandboxAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  return (
    spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('setpriv', ['--help'], { stdio: 'ignore' }).status === 0
  );
}

/**
 * Runs `spec.command` the way a container runtime would for a hardened pod, without an image
 * builder: a read-only root holding only the given host directories, writable emptyDirs, the
 * service-account files, a non-root uid, no capabilities, and only `spec.env` in the environment.
 * It shares the host's network, so loopback servers are reachable. Needs root (see
 * `podSandboxAvailable`). The returned process is the command itself: signals reach it directly.
 */
export function startInPodSandbox(spec: PodSpecLike, logFile: string): ChildProcess {
  const root = mkdtempSync(join(tmpdir(), 'mooring-pod-root-'));
  let saDir = '';
  if (spec.serviceAccount) {
    saDir = mkdtempSync(join(tmpdir(), 'mooring-pod-sa-'));
    writeFileSync(join(saDir, 'token'), spec.serviceAccount.token, { mode: 0o600 });
    writeFileSync(join(saDir, 'ca.crt'), spec.serviceAccount.caCrt);
    writeFileSync(join(saDir, 'namespace'), spec.serviceAccount.namespace);
  }
  const out = openSync(logFile, 'a');
  const child = spawn(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      SCRIPT,
      'pod-sandbox',
      root,
      saDir,
      spec.workdir,
      String(spec.uid),
      spec.emptyDirs.join(' '),
      ...Object.entries(spec.readOnly).flat(),
      '--',
      'env',
      '-i',
      ...Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      ...spec.command,
    ],
    { stdio: ['ignore', out, out] },
  );
  child.once('exit', () => {
    // The namespace's mounts are gone with the process; what is left on the host are empty dirs.
    rmSync(root, { recursive: true, force: true });
    if (saDir) rmSync(saDir, { recursive: true, force: true });
  });
  return child;
}
