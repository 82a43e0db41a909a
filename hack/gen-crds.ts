// Writes crds/<group>_<plural>.yaml from shared/api and removes stale YAML files there.
// Usage: node --import tsx hack/gen-crds.ts [--check]
// --check writes nothing and exits 1 when any file is missing, different or stale.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrdFiles } from '../shared/api/src/crd.ts';

const CRDS_DIR = fileURLToPath(new URL('../crds/', import.meta.url));

interface Drift {
  missing: string[];
  changed: string[];
  extra: string[];
}

async function readExisting(dir: string): Promise<Map<string, string>> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort();
  const entries = await Promise.all(
    names.map(async (name) => [name, await readFile(join(dir, name), 'utf8')] as const),
  );
  return new Map(entries);
}

function diff(wanted: Map<string, string>, existing: Map<string, string>): Drift {
  const drift: Drift = { missing: [], changed: [], extra: [] };
  for (const [name, text] of wanted) {
    const current = existing.get(name);
    if (current === undefined) drift.missing.push(name);
    else if (current !== text) drift.changed.push(name);
  }
  for (const name of existing.keys()) if (!wanted.has(name)) drift.extra.push(name);
  return drift;
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const wanted = renderCrdFiles();
  const drift = diff(wanted, await readExisting(CRDS_DIR));
  const stale = [...drift.missing, ...drift.changed, ...drift.extra];

  if (check) {
    if (stale.length === 0) return 0;
    for (const name of drift.missing) console.error(`crds/${name}: missing`);
    for (const name of drift.changed) console.error(`crds/${name}: out of date`);
    for (const name of drift.extra) console.error(`crds/${name}: matches no kind`);
    console.error('crds/ is stale: run `npm run gen-crds`.');
    return 1;
  }

  for (const name of [...drift.missing, ...drift.changed]) {
    await writeFile(join(CRDS_DIR, name), wanted.get(name)!);
    console.log(`wrote crds/${name}`);
  }
  for (const name of drift.extra) {
    await rm(join(CRDS_DIR, name));
    console.log(`removed crds/${name}`);
  }
  if (stale.length === 0) console.log(`crds/ is up to date (${wanted.size} files)`);
  return 0;
}

process.exitCode = await main();
