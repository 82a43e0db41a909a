// Builds the operator image without a container engine: three layers (the Debian packages, Node,
// the app), an OCI image config that runs as uid 65532 with no shell, an SPDX SBOM, and the OCI
// layout plus an archive of it. Each layer is a reproducible tar (hack/lib/image/layer.ts) and every
// time in the image is the commit time of HEAD, so a build of the same tree gives the same digest.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { BUNDLE_RUNTIME_ENV, bundleOperators } from '../bundle-operators.ts';
import { repoRoot } from '../control-plane.ts';
import { type DebianLock, fetchPackages, unpackPackages } from './debian-packages.ts';
import { type Layer, layerFromDir } from './layer.ts';
import { installNode, NODE_VERSION } from './node-binary.ts';
import { archiveLayout, type BuiltImage, imageManifest, writeLayout } from './oci-layout.ts';
import { spdxDocument } from './sbom.ts';

export const IMAGE_NAME = 'ghcr.io/mooring-dev/mooring';
export const IMAGE_UID = 65532;
export const LOCK_FILE = join(repoRoot, 'hack/lib/image/debian.lock.json');
/** Where `hack/image build` writes by default, and where the tests look for the image. */
export const DEFAULT_OUT_DIR = join(repoRoot, '.mooring/image');
/** Downloads (the .debs, the Node tarball) outlive a clone, as Go's module cache does. */
export const DEFAULT_CACHE_DIR = join(
  process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
  'mooring/image',
);

export interface BuildOptions {
  version: string;
  outDir?: string;
  cacheDir?: string;
  /** The commit the image names and takes its times from; default HEAD when the build starts. */
  revision?: string;
  /** Progress lines; silent by default. */
  log?: (line: string) => void;
}

export interface BuildResult extends BuiltImage {
  refName: string;
  layoutDir: string;
  archive: string;
  sbomFile: string;
  /** Compressed bytes a pull downloads: config and layers. */
  compressedSize: number;
  /** Bytes of the unpacked layers. */
  uncompressedSize: number;
}

function git(args: string[]): string {
  const r = spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

function sh(script: string, ...args: string[]): void {
  const r = spawnSync('sh', ['-c', script, 'image-build', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr.trim().slice(-500)}`);
}

// Users as distroless names them: root, and nonroot for the operators.
const PASSWD = `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${IMAGE_UID}:${IMAGE_UID}:nonroot:/home/nonroot:/sbin/nologin\n`;
const GROUP = `root:x:0:\nnonroot:x:${IMAGE_UID}:\n`;
const NSSWITCH =
  'passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n';

/** The Debian layer's tree: the locked packages unpacked, then what their scripts would have made. */
function debianTree(root: string, lock: DebianLock, debs: Map<string, string>): void {
  for (const dir of ['usr/bin', 'usr/lib', 'usr/lib64', 'usr/sbin'])
    mkdirSync(join(root, dir), { recursive: true });
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) symlinkSync(`usr/${link}`, join(root, link));
  unpackPackages(
    lock.packages.map((p) => debs.get(p.name)!),
    root,
  );
  // Documentation goes except each package's copyright file (their licences).
  const doc = join(root, 'usr/share/doc');
  for (const pkg of readdirSync(doc)) {
    const dir = join(doc, pkg);
    if (!lstatSync(dir).isDirectory()) continue;
    for (const f of readdirSync(dir))
      if (f !== 'copyright') rmSync(join(dir, f), { recursive: true, force: true });
  }
  for (const dir of ['man', 'info', 'locale', 'lintian', 'bug', 'bash-completion', 'gitweb', 'perl5'])
    rmSync(join(root, 'usr/share', dir), { recursive: true, force: true });
  // No setuid or setgid file: nothing in the image may gain privileges (ssh-keysign is one).
  sh('find "$1" -perm /6000 -type f -exec chmod ug-s {} +', root);
  // What ca-certificates' update-ca-certificates would write: every certificate it ships, in order.
  const certs = join(root, 'usr/share/ca-certificates/mozilla');
  const bundle = readdirSync(certs)
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => readFileSync(join(certs, f), 'utf8'))
    .join('');
  mkdirSync(join(root, 'etc/ssl/certs'), { recursive: true });
  writeFileSync(join(root, 'etc/ssl/certs/ca-certificates.crt'), bundle);
  writeFileSync(join(root, 'etc/passwd'), PASSWD);
  writeFileSync(join(root, 'etc/group'), GROUP);
  writeFileSync(join(root, 'etc/nsswitch.conf'), NSSWITCH);
  // Kubernetes mounts its own over it; other runtimes may not, and localhost must resolve.
  writeFileSync(join(root, 'etc/hosts'), '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n');
  // Scanners (trivy, grype, syft) read the package list where distroless images keep it.
  const status = join(root, 'var/lib/dpkg/status.d');
  mkdirSync(status, { recursive: true });
  for (const p of lock.packages) {
    const r = spawnSync('dpkg-deb', ['--field', debs.get(p.name)!], { encoding: 'utf8' });
    if (r.status !== 0)
      throw new Error(`dpkg-deb --field ${basename(debs.get(p.name)!)} failed: ${r.stderr}`);
    writeFileSync(join(status, p.name), `${r.stdout.trimEnd()}\nStatus: install ok installed\n`);
  }
  for (const dir of ['tmp', 'data', 'home/nonroot']) mkdirSync(join(root, dir), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
}

/** Builds the image; see the file's header. Needs apt-get, dpkg-deb, GNU tar, npm and git. */
export async function buildImage(options: BuildOptions): Promise<BuildResult> {
  const log = options.log ?? (() => {});
  const outDir = options.outDir ?? DEFAULT_OUT_DIR;
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR;
  // At one depth below the checkout whatever outDir is: the source maps' paths are relative to
  // the bundles, so a work tree elsewhere would give other bytes.
  const work = join(repoRoot, '.mooring/image-work', `${process.pid}-${Date.now()}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const revision = options.revision ?? git(['rev-parse', 'HEAD']);
  const epoch = Number(git(['log', '-1', '--format=%ct', revision]));
  const created = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
  const lock = JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as DebianLock;

  log(`Debian packages: ${lock.packages.length} from ${LOCK_FILE.slice(repoRoot.length + 1)}`);
  const debs = fetchPackages(lock, join(cacheDir, 'debs'));
  const base = join(work, 'debian');
  debianTree(base, lock, debs);

  log(`Node ${NODE_VERSION}`);
  const node = join(work, 'node');
  installNode(cacheDir, node);

  log('operator bundles');
  const appRoot = join(work, 'app');
  const app = join(appRoot, 'app');
  const bundled = await bundleOperators(app);
  mkdirSync(join(app, 'bin'), { recursive: true });
  copyFileSync(join(repoRoot, 'bin/mooring-helm.wasm'), join(app, 'bin/mooring-helm.wasm'));
  const sbom = spdxDocument({
    version: options.version,
    revision,
    created,
    debian: lock.packages,
    npm: bundled.packages,
  });
  writeFileSync(join(app, 'sbom.spdx.json'), sbom);

  log('layers');
  const layers: Layer[] = [
    await layerFromDir(base, epoch),
    await layerFromDir(node, epoch),
    // The checkout's file modes depend on the umask it was made with; the image's do not.
    await layerFromDir(appRoot, epoch, ['--mode=u=rwX,go=rX']),
  ];
  const labels: Record<string, string> = {
    'org.opencontainers.image.title': 'mooring',
    'org.opencontainers.image.description':
      'Mooring GitOps operators: source, kustomize, notification, image-automation',
    'org.opencontainers.image.source': 'https://github.com/mooring-dev/mooring',
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.version': options.version,
    'org.opencontainers.image.created': created,
    'org.opencontainers.image.base.name': 'debian:bookworm (packages from hack/lib/image/debian.lock.json)',
  };
  const history = [
    'Debian packages (hack/lib/image/debian.lock.json)',
    `Node ${NODE_VERSION}`,
    'operator bundles',
  ];
  const config = Buffer.from(
    JSON.stringify({
      created,
      architecture: 'amd64',
      os: 'linux',
      config: {
        User: `${IMAGE_UID}:${IMAGE_UID}`,
        Env: [
          'PATH=/usr/local/bin:/usr/bin:/bin',
          'HOME=/home/nonroot',
          'NODE_ENV=production',
          // shared/helm finds its renderer here; the bundles carry no path of this checkout.
          'MOORING_HELM_WASM=/app/bin/mooring-helm.wasm',
          // The in-cluster UI's page, prebuilt by the bundle step (config/ui runs dist/ui.mjs).
          'MOORING_UI_PAGE_DIR=/app/dist/ui-page',
          ...Object.entries(BUNDLE_RUNTIME_ENV).map(([name, value]) => `${name}=${value}`),
        ],
        // tini as PID 1 reaps what git and ssh leave behind; the Deployments name it in `command`.
        Entrypoint: ['/usr/bin/tini', '--'],
        Cmd: ['node', '/app/dist/all-in-one.mjs'],
        WorkingDir: '/app',
        Labels: labels,
      },
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: history.map((created_by) => ({ created, created_by })),
    }),
  );
  const image = imageManifest(config, layers, labels);
  const refName = `${IMAGE_NAME}:${options.version}`;
  const layoutDir = join(outDir, 'oci');
  writeLayout(layoutDir, image, refName);
  const archive = join(outDir, 'mooring-image.tar');
  archiveLayout(layoutDir, archive, epoch);
  const sbomFile = join(outDir, 'sbom.spdx.json');
  writeFileSync(sbomFile, sbom);
  rmSync(work, { recursive: true, force: true });
  const result: BuildResult = {
    ...image,
    refName,
    layoutDir,
    archive,
    sbomFile,
    compressedSize: config.length + layers.reduce((n, l) => n + l.data.length, 0),
    uncompressedSize: layers.reduce((n, l) => n + l.uncompressedSize, 0),
  };
  writeFileSync(
    join(outDir, 'image.json'),
    `${JSON.stringify({ refName, digest: image.digest, compressedSize: result.compressedSize, uncompressedSize: result.uncompressedSize }, null, 2)}\n`,
  );
  return result;
}
