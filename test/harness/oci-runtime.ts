// Runs a container from an unpacked image with runc (Debian's package), as kubelet's runtime
// would run a pod's container: the image's root read-only, emptyDirs as kubelet makes them (a
// fresh directory of the node, mode 0777, bound in), the
// service-account files mounted read-only, a non-root uid with no capabilities and no new
// privileges, its own pid, ipc, uts and mount namespaces. It shares the host's network, so the
// loopback control plane and test servers are reachable (a pod network is not what is tested).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ContainerSpec {
  /** The unpacked image (shared by containers: it is mounted read-only). */
  rootfs: string;
  /** What runs: the Deployment's command and args, after the image's Entrypoint/Cmd rules. */
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid: number;
  gid: number;
  /** Paths that get an empty writable directory, as emptyDir volumes do (e.g. /tmp, /data). */
  emptyDirs: string[];
  serviceAccount?: { token: string; caCrt: string; namespace: string };
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** True when runc is installed and this process is root (runc's rootful mode). */
export function runcAvailable(): boolean {
  return process.getuid?.() === 0 && spawnSync('runc', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Unpacks gzip-compressed layer tars in order into `rootfs` (the image is ours: no whiteouts in it). */
export function unpackLayers(layerFiles: string[], rootfs: string): void {
  mkdirSync(rootfs, { recursive: true });
  for (const layer of layerFiles) {
    const r = spawnSync('tar', ['-xzf', layer, '-C', rootfs, '--numeric-owner'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`unpacking ${layer} failed: ${r.stderr}`);
  }
}

function runtimeSpec(
  spec: ContainerSpec,
  saDir: string | undefined,
  emptyDirs: string[],
  podFiles: string,
): object {
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: spec.uid, gid: spec.gid },
      args: spec.args,
      env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      cwd: spec.cwd,
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      noNewPrivileges: true,
    },
    root: { path: spec.rootfs, readonly: true },
    hostname: 'pod',
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      {
        destination: '/dev',
        type: 'tmpfs',
        source: 'tmpfs',
        options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'],
      },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620'],
      },
      {
        destination: '/dev/shm',
        type: 'tmpfs',
        source: 'shm',
        options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'],
      },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      ...spec.emptyDirs.map((destination, i) => ({
        destination,
        type: 'bind',
        source: emptyDirs[i],
        options: ['rbind', 'rw', 'nosuid', 'nodev'],
      })),
      // What kubelet writes into every pod: its hosts file, hostname and resolver configuration.
      ...['hosts', 'hostname', 'resolv.conf'].map((f) => ({
        destination: `/etc/${f}`,
        type: 'bind',
        source: join(podFiles, f),
        options: ['rbind', 'ro'],
      })),
      ...(saDir
        ? [{ destination: SERVICE_ACCOUNT_DIR, type: 'bind', source: saDir, options: ['rbind', 'ro'] }]
        : []),
    ],
    linux: {
      namespaces: [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }],
      maskedPaths: ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/sys/firmware'],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
    },
  };
}

export interface RunningContainer {
  readonly id: string;
  readonly process: ChildProcess;
  /** SIGTERM through runc (tini passes it on), then the container is deleted. */
  stop(): Promise<void>;
}

/** Starts the container in the foreground of `runc run`, its output appended to `logFile`. */
export function runContainer(spec: ContainerSpec, logFile: string): RunningContainer {
  const bundle = mkdtempSync(join(tmpdir(), 'mooring-runc-'));
  let saDir: string | undefined;
  if (spec.serviceAccount) {
    saDir = join(bundle, 'serviceaccount');
    mkdirSync(saDir);
    writeFileSync(join(saDir, 'token'), spec.serviceAccount.token, { mode: 0o444 });
    writeFileSync(join(saDir, 'ca.crt'), spec.serviceAccount.caCrt, { mode: 0o444 });
    writeFileSync(join(saDir, 'namespace'), spec.serviceAccount.namespace, { mode: 0o444 });
  }
  // kubelet's emptyDir: an empty directory anyone in the pod can write (runc would give a tmpfs the
  // mode of the image's mount point instead).
  const emptyDirs = spec.emptyDirs.map((_d, i) => {
    const dir = join(bundle, `empty-dir-${i}`);
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    return dir;
  });
  const podFiles = join(bundle, 'etc');
  mkdirSync(podFiles);
  writeFileSync(join(podFiles, 'hosts'), '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n');
  writeFileSync(join(podFiles, 'hostname'), 'pod\n');
  writeFileSync(
    join(podFiles, 'resolv.conf'),
    existsSync('/etc/resolv.conf') ? readFileSync('/etc/resolv.conf') : '',
  );
  writeFileSync(join(bundle, 'config.json'), JSON.stringify(runtimeSpec(spec, saDir, emptyDirs, podFiles)));
  const id = `mooring-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const out = openSync(logFile, 'a');
  const child = spawn('runc', ['run', '--bundle', bundle, id], { stdio: ['ignore', out, out] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    id,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null)
        spawnSync('runc', ['kill', id, 'TERM'], { stdio: 'ignore' });
      await exited;
      spawnSync('runc', ['delete', '--force', id], { stdio: 'ignore' });
      rmSync(bundle, { recursive: true, force: true });
    },
  };
}
