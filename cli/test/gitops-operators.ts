import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { OperatorDefinition } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { type InProcessOperators, startInProcessOperators } from '@mooring/test/harness';

/**
 * The source and kustomize operators (or just `definitions`) in this test process, watching
 * `namespace`, with artifact storage in a temp dir of their own. They stop when the test ends;
 * `stop()` may end them sooner and is then a no-op at the end.
 */
export async function startGitOpsOperators(
  t: TestContext,
  namespace: string,
  options: { kubeconfig?: string; definitions?: OperatorDefinition[] } = {},
): Promise<InProcessOperators> {
  const storage = await mkdtemp(join(tmpdir(), 'mooring-cli-storage-'));
  const operators = await startInProcessOperators(
    options.definitions ?? [sourceOperator(), kustomizeOperator()],
    namespace,
    ['--storage-path', storage, '--storage-addr', '127.0.0.1:0'],
    { kubeconfig: options.kubeconfig },
  );
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= operators.stop().finally(() => rm(storage, { recursive: true, force: true }));
    return stopped;
  };
  t.after(stop);
  return { stop };
}
