import { type OperatorDefinition, parseOperatorOptions, runOperators } from '@mooring/runtime';
import { testCluster } from './cluster.ts';

export interface InProcessOperators {
  stop(): Promise<void>;
}

/** Operators this process started, with the loopback port their `/metrics` is served on. */
export interface StartedOperators extends InProcessOperators {
  metricsPort: number;
}

/**
 * Runs operators in the test process against the test cluster, watching one namespace (so test
 * files running side by side never reconcile each other's objects), with every listener on a free
 * loopback port. Resolves once they serve; `stop()` shuts them down as SIGTERM would.
 */
export async function startInProcessOperators(
  definitions: OperatorDefinition[],
  namespace: string,
  args: string[] = [],
  placement: { kubeconfig?: string } = {},
): Promise<StartedOperators> {
  // A test with a control plane of its own passes its kubeconfig; the rest share the test plane.
  const kubeconfig = placement.kubeconfig ?? (await testCluster()).kubeconfig;
  const extraFlags = Object.assign({}, ...definitions.map((d) => d.extraFlags ?? {}));
  const options = parseOperatorOptions(
    [
      '--kubeconfig',
      kubeconfig,
      '--watch-namespace',
      namespace,
      '--metrics-addr',
      '127.0.0.1:0',
      '--health-addr',
      '127.0.0.1:0',
      '--log-level',
      process.env.MOORING_TEST_LOG_LEVEL ?? 'silent',
      ...args,
    ],
    {},
    { extraFlags },
  );
  const shutdown = new AbortController();
  let done: Promise<number> | undefined;
  const metricsPort = await new Promise<number>((resolve, reject) => {
    done = runOperators(definitions, options, {
      shutdown: shutdown.signal,
      onReady: (ports) => resolve(ports.metrics),
    });
    done.then((code) => reject(new Error(`the operators exited ${code} before they were ready`)), reject);
  });
  return {
    metricsPort,
    async stop() {
      shutdown.abort();
      await done;
    },
  };
}
