import { computeStatus } from '@mooring/kstatus';
import type { KubeClient } from '@mooring/runtime';
import { CliError } from './cli-error.ts';

/**
 * Waits until each named Deployment has finished rolling out (kstatus `Current`: every replica
 * updated and available, as `kubectl rollout status` means it), printing each as it gets there.
 * Polls once a second: a handful of objects for a few minutes does not need a watch per object.
 */
export async function waitForDeployments(
  client: KubeClient,
  namespace: string,
  names: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(names);
  const lastMessage = new Map<string, string>();
  process.stderr.write(`◎ waiting for ${names.join(', ')} in ${namespace} to roll out\n`);
  for (;;) {
    for (const name of [...pending]) {
      const dep = await client.getOrUndefined({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
      const result = dep
        ? computeStatus(dep as unknown as Record<string, unknown>)
        : { status: 'NotFound', message: 'not found' };
      if (result.status === 'Current') {
        pending.delete(name);
        process.stderr.write(`✔ Deployment ${namespace}/${name} is ready\n`);
      } else lastMessage.set(name, result.message);
    }
    if (pending.size === 0) return;
    if (Date.now() > deadline) {
      const first = [...pending][0]!;
      throw new CliError(
        `Deployment ${namespace}/${first} did not roll out within ${Math.round(timeoutMs / 1000)}s (${lastMessage.get(first)}): see 'kubectl -n ${namespace} describe deployment ${first}' and its pods' events.`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
