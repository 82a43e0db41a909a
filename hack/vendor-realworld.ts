// Copies small real-world kustomize trees into test/conformance/realworld/<owner>-<name>/ as test data.
// Usage: node --import tsx hack/vendor-realworld.ts <repository checkout> <folder>...
// The checkout holds one commit of a public repository and a `.realworld-source` file (`repository:`
// and `commit:`, as hack/realworld-report.ts reads it). Each folder is built once by the engine
// through a file system that records what it reads; exactly those files are copied (so a vendored
// overlay brings its bases, patches and generator inputs and nothing else), with the repository's
// LICENSE and a SOURCE file naming the repository, the commit and the folders.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, type ConfinedFs, createConfinedFs } from '@mooring/kustomize';
import { REALWORLD_DIR } from '../test/conformance/realworld.ts';

/** A ConfinedFs that notes every file it reads. */
function recording(fs: ConfinedFs, read: Set<string>): ConfinedFs {
  return {
    root: fs.root,
    readFile: (rel) => {
      const data = fs.readFile(rel);
      read.add(fs.realPath(rel) ?? rel);
      return data;
    },
    readDir: (rel) => fs.readDir(rel),
    isDir: (rel) => fs.isDir(rel),
    exists: (rel) => fs.exists(rel),
    realPath: (rel) => fs.realPath(rel),
  };
}

async function main(): Promise<void> {
  const [checkout, ...folders] = process.argv.slice(2);
  if (!checkout || folders.length === 0)
    throw new Error('usage: hack/vendor-realworld.ts <repository checkout> <folder>...');
  const source = readFileSync(join(checkout, '.realworld-source'), 'utf8');
  const field = (k: string): string => {
    const value = source.match(new RegExp(`^${k}:\\s*(\\S+)`, 'm'))?.[1];
    if (!value) throw new Error(`${checkout}/.realworld-source has no ${k}:`);
    return value;
  };
  const repository = field('repository');
  // owner-name: a bare name (`manifests`) says too little.
  const target = join(REALWORLD_DIR, repository.split('/').slice(-2).join('-'));
  const read = new Set<string>();
  const fs = recording(createConfinedFs(checkout), read);
  for (const folder of folders) {
    try {
      await build(fs, folder);
    } catch (err) {
      // A folder kustomize refuses is worth vendoring too: what it read up to the error is copied.
      process.stderr.write(`vendor: ${folder}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
  for (const rel of read) {
    mkdirSync(dirname(join(target, rel)), { recursive: true });
    copyFileSync(join(checkout, rel), join(target, rel));
  }
  mkdirSync(target, { recursive: true });
  copyFileSync(join(checkout, 'LICENSE'), join(target, 'LICENSE'));
  const sourceFile = join(target, 'SOURCE');
  const listed = existsSync(sourceFile)
    ? readFileSync(sourceFile, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('- '))
        .map((l) => l.slice(2))
    : [];
  const paths = [...new Set([...listed, ...folders])].sort();
  writeFileSync(
    sourceFile,
    `repository: ${repository}\ncommit: ${field('commit')}\npaths (the folders vendored; the files each build reads):\n${paths.map((p) => `- ${p}`).join('\n')}\n`,
  );
  process.stderr.write(`vendor: ${read.size} files into ${target}\n`);
}

await main();
