// `hack/image build|push|lock`: the operator image, with no container engine (see hack/lib/image/).
//   hack/image build [--version v0.1.0] [--out .mooring/image]   build; print digest, size, SBOM
//   hack/image push --registry <host[:port]/path> [--version …] [--insecure]   push the built image
//   hack/image lock                                              re-resolve the Debian packages
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './lib/control-plane.ts';
import { buildImage, DEFAULT_OUT_DIR, LOCK_FILE } from './lib/image/build.ts';
import { lockPackages, resolvePackages } from './lib/image/debian-packages.ts';
import { pushLayout } from './lib/image/registry.ts';

/** The tag config/kustomization.yaml installs: the image a build names by default. */
function installedVersion(): string {
  const text = readFileSync(join(repoRoot, 'config/kustomization.yaml'), 'utf8');
  const tag = /newTag:\s*(\S+)/.exec(text)?.[1];
  if (!tag) throw new Error('config/kustomization.yaml names no image tag (images[].newTag)');
  return tag;
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      version: { type: 'string' },
      out: { type: 'string' },
      registry: { type: 'string' },
      insecure: { type: 'boolean' },
    },
  });
  const version = values.version ?? installedVersion();
  const outDir = values.out ?? DEFAULT_OUT_DIR;
  switch (command) {
    case 'build': {
      const r = await buildImage({ version, outDir, log: (l) => console.error(`image: ${l}`) });
      console.log(`image:   ${r.refName}`);
      console.log(`digest:  ${r.digest}`);
      console.log(
        `size:    ${mib(r.compressedSize)} compressed (pulled), ${mib(r.uncompressedSize)} unpacked`,
      );
      console.log(
        `layers:  ${r.layers.map((l) => `${l.digest.slice(7, 19)} ${mib(l.data.length)}`).join(', ')}`,
      );
      console.log(`sbom:    ${r.sbomFile} (SPDX 2.3; also /app/sbom.spdx.json in the image)`);
      console.log(`layout:  ${r.layoutDir} (OCI image layout)`);
      console.log(`archive: ${r.archive} (oci-archive, and docker load reads it too)`);
      return 0;
    }
    case 'push': {
      if (!values.registry) throw new Error('hack/image push needs --registry <host[:port]/path>');
      const pushed = await pushLayout(join(outDir, 'oci'), values.registry, version, {
        insecure: values.insecure ?? false,
      });
      console.log(`pushed ${pushed.reference}@${pushed.digest}`);
      return 0;
    }
    case 'lock': {
      const packages = lockPackages(resolvePackages());
      const sources = 'the apt sources of the machine that ran `hack/image lock` (Debian 12 bookworm, amd64)';
      writeFileSync(LOCK_FILE, `${JSON.stringify({ sources, packages }, null, 2)}\n`);
      console.log(`locked ${packages.length} Debian packages in ${LOCK_FILE}`);
      return 0;
    }
    default:
      console.error(
        'usage: hack/image build|push|lock [--version <tag>] [--registry <host/path>] [--out <dir>]',
      );
      return 2;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`image: ${(err as Error).message}`);
  process.exitCode = 1;
}
