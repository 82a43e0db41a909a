import type { KubeObject } from '@mooring/runtime';
import { stringify } from 'yaml';
import { CLI_FIELD_MANAGER, type Session } from './session.ts';

/** One object as a YAML document, as `--export` and `export` print it. */
export function yamlDocument(obj: unknown): string {
  return `---\n${stringify(obj, { lineWidth: 0 })}`;
}

/** Prints `obj` as YAML with `--export`; otherwise applies it server-side and says so. */
export async function applyOrExport(session: Session, obj: KubeObject, exportOnly: boolean): Promise<void> {
  if (exportOnly) {
    process.stdout.write(yamlDocument(obj));
    return;
  }
  await session.use(async (client) => {
    await client.apply(obj, { fieldManager: CLI_FIELD_MANAGER, force: true });
  });
  const ns = obj.metadata.namespace ? `${obj.metadata.namespace}/` : '';
  process.stdout.write(`✔ ${obj.kind} ${ns}${obj.metadata.name} applied\n`);
}
