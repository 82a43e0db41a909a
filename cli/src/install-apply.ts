import type { KubeClient, KubeObject } from '@mooring/runtime';
import { CliError } from './cli-error.ts';
import { isFoundation } from './install-manifests.ts';
import { CLI_FIELD_MANAGER } from './session.ts';

async function waitForCrds(client: KubeClient, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await client.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name,
      });
      const conditions = (crd.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new CliError(
          `CRD ${name} is not Established after ${timeoutMs / 1000}s: check the API server logs.`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Applies the install manifests (CRDs and Namespaces first, then the rest), with progress on stderr. */
export async function applyInstall(client: KubeClient, objects: KubeObject[]): Promise<void> {
  const apply = async (batch: KubeObject[]): Promise<void> => {
    for (const obj of batch) await client.apply(obj, { fieldManager: CLI_FIELD_MANAGER, force: true });
  };
  const first = objects.filter(isFoundation);
  process.stderr.write(`► applying ${first.length} CRDs and namespaces\n`);
  await apply(first);
  await waitForCrds(
    client,
    first.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name!),
    60_000,
  );
  process.stderr.write('✔ CRDs established\n');
  const rest = objects.filter((o) => !isFoundation(o));
  process.stderr.write(`► applying ${rest.length} objects\n`);
  await apply(rest);
}
