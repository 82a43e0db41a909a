import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderCrdDirectory } from './crd.ts';
import { OPERATOR_NAMES } from './kind-registry.ts';
import { withKindRules } from './rbac.ts';

// The one copy of the generated CRDs (kustomize reads no file outside config/, so it lives there).
const CRDS_DIR = fileURLToPath(new URL('../../../config/crds/', import.meta.url));
const OPERATORS_DIR = fileURLToPath(new URL('../../../config/operators/', import.meta.url));

test('config/crds/ matches the schemas in shared/api', async () => {
  const wanted = renderCrdDirectory();
  const present = (await readdir(CRDS_DIR)).filter((name) => name.endsWith('.yaml'));
  const problems: string[] = [];
  for (const [name, text] of wanted) {
    if (!present.includes(name)) problems.push(`config/crds/${name} is missing`);
    else if ((await readFile(join(CRDS_DIR, name), 'utf8')) !== text)
      problems.push(`config/crds/${name} is out of date`);
  }
  for (const name of present) if (!wanted.has(name)) problems.push(`config/crds/${name} matches no kind`);
  assert.deepEqual(problems, [], `config/crds/ is stale; run \`npm run gen-crds\`:\n${problems.join('\n')}`);
});

test("config/operators/ ClusterRoles' kind rules match the kind registry in shared/api", async () => {
  const problems: string[] = [];
  for (const operator of OPERATOR_NAMES) {
    const text = await readFile(join(OPERATORS_DIR, `${operator}.yaml`), 'utf8');
    if (withKindRules(text, operator) !== text)
      problems.push(`config/operators/${operator}.yaml's kind rules are out of date`);
  }
  assert.deepEqual(
    problems,
    [],
    `config/operators/ is stale; run \`npm run gen-crds\`:\n${problems.join('\n')}`,
  );
});
