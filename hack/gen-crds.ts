// Writes config/crds/ from shared/api: a <group>_<plural>.yaml per kind and the kustomization.yaml
// that lists them, removing stale YAML files there; and rewrites the kind rules (between
// `# BEGIN kind rules` and `# END kind rules`) of each config/operators/<operator>.yaml ClusterRole
// from shared/api's kind registry. config/crds/ is the only copy of the CRDs: `kubectl apply -k
// config/`, `mooring install` and the test control plane all read it.
// Usage: node --import tsx hack/gen-crds.ts [--check]
// --check writes nothing and exits 1 when any file is missing, different or stale.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrdDirectory } from '../shared/api/src/crd.ts';
import { OPERATOR_NAMES } from '../shared/api/src/kind-registry.ts';
import { withKindRules } from '../shared/api/src/rbac.ts';

const CRDS_DIR = fileURLToPath(new URL('../config/crds/', import.meta.url));
const LABEL = 'config/crds';
const OPERATORS_DIR = fileURLToPath(new URL('../config/operators/', import.meta.url));

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
  const wanted = renderCrdDirectory();
  let failed = false;
  const drift = diff(wanted, await readExisting(CRDS_DIR));
  const stale = [...drift.missing, ...drift.changed, ...drift.extra];
  if (check) {
    for (const name of drift.missing) console.error(`${LABEL}/${name}: missing`);
    for (const name of drift.changed) console.error(`${LABEL}/${name}: out of date`);
    for (const name of drift.extra) console.error(`${LABEL}/${name}: matches no kind`);
    if (stale.length > 0) {
      console.error(`${LABEL}/ is stale: run \`npm run gen-crds\`.`);
      failed = true;
    }
  } else {
    for (const name of [...drift.missing, ...drift.changed]) {
      await writeFile(join(CRDS_DIR, name), wanted.get(name)!);
      console.log(`wrote ${LABEL}/${name}`);
    }
    for (const name of drift.extra) {
      await rm(join(CRDS_DIR, name));
      console.log(`removed ${LABEL}/${name}`);
    }
    if (stale.length === 0) console.log(`${LABEL}/ is up to date (${wanted.size} files)`);
  }
  for (const operator of OPERATOR_NAMES) {
    const path = join(OPERATORS_DIR, `${operator}.yaml`);
    const current = await readFile(path, 'utf8');
    const text = withKindRules(current, operator);
    if (text === current) continue;
    if (check) {
      console.error(`config/operators/${operator}.yaml: kind rules out of date: run \`npm run gen-crds\`.`);
      failed = true;
      continue;
    }
    await writeFile(path, text);
    console.log(`wrote config/operators/${operator}.yaml's kind rules`);
  }
  return failed ? 1 : 0;
}

process.exitCode = await main();
