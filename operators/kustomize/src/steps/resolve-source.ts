import type { KustomizationRun } from '../kustomization-run.ts';
import { resolveSource as findSource } from '../source-ref.ts';

/** The source's artifact, and the cluster the objects go to (this one, or `spec.kubeConfig`'s). */
export async function resolveSource(run: KustomizationRun): Promise<undefined> {
  const { client } = run.deps;
  run.source = await findSource(client, run.obj, { ...run.deps, cache: run.ctx.cache });
  run.target = (await run.memory.remotes.clientFor(client, run.obj)) ?? client;
  return undefined;
}
