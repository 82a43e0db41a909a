// The install manifests run each operator alone, with Flux's defaults. Whatever the flag table
// says, each Deployment's arguments must still be accepted by its operator's main, and every
// address the process would listen on must be a port its container declares.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseEntry, parseListenAddress } from '@mooring/runtime';
import { parseAllDocuments } from 'yaml';
import { OPERATORS } from './registry.ts';

const repoRoot = join(import.meta.dirname, '../../..');

interface Container {
  command: string[];
  args: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { containerPort: number }[];
}

function container(name: string): Container {
  const text = readFileSync(join(repoRoot, `config/operators/${name}.yaml`), 'utf8');
  const deployment = parseAllDocuments(text)
    .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Container[] } } } })
    .find((d) => d.kind === 'Deployment');
  assert.ok(deployment, `config/operators/${name}.yaml has a Deployment`);
  return deployment.spec!.template.spec.containers[0]!;
}

describe('each Deployment’s arguments suit its operator’s flags', () => {
  for (const [name, load] of Object.entries(OPERATORS)) {
    it(name, async () => {
      const c = container(name);
      assert.equal(c.command.at(-1), `/app/dist/${name}.mjs`);
      // $(VAR) as kubelet expands it, from the pod's namespace.
      const env = Object.fromEntries(
        (c.env ?? [])
          .filter((e) => e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace')
          .map((e) => [e.name, 'mooring-system']),
      );
      const args = c.args.map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_m, v: string) => env[v] ?? ''));
      const parsed = parseEntry({ program: `mooring-${name}`, operators: [await load()] }, args, {});
      const declared = (c.ports ?? []).map((p) => p.containerPort).sort();
      const bound = parsed.addresses.map(([, a]) => parseListenAddress(a).port).sort();
      assert.deepEqual(
        bound,
        declared,
        `${name} listens on ${parsed.addresses.map((a) => a.join('=')).join(', ')}`,
      );
    });
  }
});
