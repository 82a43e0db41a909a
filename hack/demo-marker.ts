// While the demo's operators run in its own process, a Lease in mooring-system says so: which
// operators, on which host and pid, watching which namespace, renewed every 10 s and deleted when
// the demo stops. `mooring check` finds no operator Deployment on the demo's plane; reading this
// Lease it can tell operators that run locally from operators never installed (see
// LOCAL_OPERATORS_LEASE for the contract).
import { hostname } from 'node:os';
import { ApiError, formatMicroTime, type KubeClient, type KubeObject } from '@mooring/runtime';

/**
 * The marker: `coordination.k8s.io/v1` Lease `mooring-system/mooring-local-operators`, labelled
 * `app.kubernetes.io/part-of=mooring`, `app.kubernetes.io/component=local-operators`.
 * - `spec.holderIdentity`: `<host>_<pid>` of the process running the operators
 * - `spec.renewTime` + `spec.leaseDurationSeconds` (30): past that, the process died without
 *   deleting the Lease (kill -9); a clean stop deletes it
 * - annotation `mooring.dev/operators`: the operators it runs, comma-separated
 *   (`source,kustomize,notification`: no image-automation)
 * - annotation `mooring.dev/watch-namespace`: the namespace they watch, `""` for all
 * - annotation `mooring.dev/run-by`: how it was started (`npm run demo`)
 */
export const LOCAL_OPERATORS_LEASE = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  namespace: 'mooring-system',
  name: 'mooring-local-operators',
} as const;

const DURATION_SECONDS = 30;
const RENEW_MS = 10_000;
const FIELD_MANAGER = 'mooring-demo';

/** Writes the marker and renews it until the returned function is called, which deletes it. */
export async function markLocalOperators(
  client: Pick<KubeClient, 'create' | 'apply' | 'mergePatch' | 'delete'>,
  what: { operators: string[]; watchNamespace: string | undefined; runBy: string },
): Promise<() => Promise<void>> {
  const { apiVersion, kind, namespace, name } = LOCAL_OPERATORS_LEASE;
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  } catch (err) {
    if (!(err instanceof ApiError && err.statusCode === 409)) throw err;
  }
  const now = formatMicroTime(Date.now());
  await client.apply(
    {
      apiVersion,
      kind,
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/part-of': 'mooring', 'app.kubernetes.io/component': 'local-operators' },
        annotations: {
          'mooring.dev/operators': what.operators.join(','),
          'mooring.dev/watch-namespace': what.watchNamespace ?? '',
          'mooring.dev/run-by': what.runBy,
        },
      },
      spec: {
        holderIdentity: `${hostname()}_${process.pid}`,
        leaseDurationSeconds: DURATION_SECONDS,
        acquireTime: now,
        renewTime: now,
      },
    } as KubeObject,
    { fieldManager: FIELD_MANAGER, force: true },
  );
  const key = { apiVersion, kind, namespace, name };
  // A missed renewal (the API server busy) is retried at the next one; the marker only informs.
  const timer = setInterval(() => {
    client.mergePatch(key, { spec: { renewTime: formatMicroTime(Date.now()) } }).catch(() => {});
  }, RENEW_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await client.delete(key).catch(() => false);
  };
}
