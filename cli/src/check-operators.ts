// What `mooring check` says about each operator: its Deployment when there is one (and whether its
// pods really run: kwok's fake nodes mark pods Ready without running a container), else the Lease
// `mooring-local-operators` that the demo keeps while it runs the operators in its own process
// (hack/demo-marker.ts has the contract).
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { age } from './commands/events.ts';

export type CheckState = 'ok' | 'warn' | 'fail';

export interface CheckStep {
  state: CheckState;
  text: string;
}

/** The Lease a process running the operators outside the cluster keeps fresh in the install namespace. */
export const LOCAL_OPERATORS_LEASE_NAME = 'mooring-local-operators';

const NO_DEPLOYMENT_HINT =
  "run 'mooring install', or run the operators locally (npm run operators -- --kubeconfig …)";

/** What the Lease says, read at `now`. */
export interface LocalOperators {
  operators: string[];
  holder: string;
  /** How they were started, e.g. `npm run demo`. */
  runBy: string;
  /** '' for every namespace. */
  watchNamespace: string;
  fresh: boolean;
  /** RFC 3339 time of the last renewal, when the Lease has one. */
  renewedAt: string | undefined;
}

interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; acquireTime?: string };
}

/** Reads the Lease's annotations and times; fresh while renewTime + leaseDurationSeconds is ahead of now. */
export function readLocalOperators(lease: LeaseObject, now: number): LocalOperators {
  const annotations = lease.metadata.annotations ?? {};
  const renewedAt = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const renewed = renewedAt === undefined ? Number.NaN : Date.parse(renewedAt);
  const seconds = lease.spec?.leaseDurationSeconds ?? 0;
  return {
    operators: (annotations['mooring.dev/operators'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    holder: lease.spec?.holderIdentity || 'no holder',
    runBy: annotations['mooring.dev/run-by'] || 'npm run operators',
    watchNamespace: annotations['mooring.dev/watch-namespace'] ?? '',
    fresh: Number.isFinite(renewed) && now < renewed + seconds * 1000,
    renewedAt,
  };
}

/** The line for an operator whose Deployment does not exist. */
export function withoutDeployment(
  operator: string,
  namespace: string,
  local: LocalOperators | undefined,
  now: number,
): CheckStep {
  const notFound: CheckStep = {
    state: 'fail',
    text: `Deployment ${namespace}/${operator} not found: ${NO_DEPLOYMENT_HINT}`,
  };
  if (local === undefined) return notFound;
  const listed = local.operators.includes(operator);
  if (local.fresh) {
    if (!listed) {
      return {
        state: 'fail',
        text: `${operator} operator is not run by the local operators (${local.runBy}): run npm run operators, or mooring install`,
      };
    }
    const watching = local.watchNamespace === '' ? 'all namespaces' : `namespace ${local.watchNamespace}`;
    return {
      state: 'ok',
      text: `${operator} operator runs outside the cluster (${local.runBy}, ${local.holder}, ${watching})`,
    };
  }
  // A stale Lease that never listed this operator says nothing about it.
  if (!listed) return notFound;
  return {
    state: 'fail',
    text: `${operator} operator: no Deployment ${namespace}/${operator}, and the local operators stopped renewing ${age(local.renewedAt, now)} ago: restart ${local.runBy}`,
  };
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A Deployment's `spec.selector` as the API's labelSelector query. */
export function selectorQuery(selector: LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** kwok's fake nodes: the `type: kwok` label its docs use, or the annotation kwok manages nodes by. */
export function isKwokNode(node: KubeObject): boolean {
  return (
    node.metadata.labels?.type === 'kwok' || node.metadata.annotations?.['kwok.x-k8s.io/node'] === 'fake'
  );
}

interface PodObject extends KubeObject {
  spec?: { nodeName?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

/** True for the API server's 403: the user may not read that kind, so the check cannot tell. */
const forbidden = (err: unknown): boolean => (err as { statusCode?: number }).statusCode === 403;

const conditionTrue = (conditions: { type: string; status: string }[] | undefined, type: string) =>
  conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

/** The line for an operator whose Deployment exists: available only when a Ready pod runs on a real node. */
export async function withDeployment(
  client: KubeClient,
  operator: string,
  dep: KubeObject,
): Promise<CheckStep> {
  const namespace = dep.metadata.namespace ?? '';
  const name = `Deployment ${namespace}/${dep.metadata.name}`;
  const status = dep.status as { conditions?: { type: string; status: string }[] } | undefined;
  if (!conditionTrue(status?.conditions, 'Available'))
    return { state: 'fail', text: `${name} not available: see kubectl describe` };
  const selector = selectorQuery((dep.spec as { selector?: LabelSelector } | undefined)?.selector);
  const pods = await client
    .list<PodObject>('v1', 'Pod', { namespace, labelSelector: selector })
    .catch((err: unknown) => {
      if (forbidden(err)) return undefined;
      throw err;
    });
  if (pods === undefined) return { state: 'ok', text: `${name} available (its pods cannot be read)` };
  // A terminating pod is on its way out, whatever its last Ready said.
  const ready = pods.items.filter(
    (p) => !p.metadata.deletionTimestamp && conditionTrue(p.status?.conditions, 'Ready'),
  );
  if (ready.length === 0)
    return { state: 'fail', text: `${name} is available but has no Ready pod: is it scaled to 0?` };
  const nodes = [...new Set(ready.map((p) => p.spec?.nodeName).filter((n): n is string => !!n))];
  const fake = await Promise.all(
    nodes.map((n) =>
      client
        .getOrUndefined({ apiVersion: 'v1', kind: 'Node', name: n })
        // Without the right to read nodes, a Ready pod is taken at its word.
        .then((node) => node !== undefined && isKwokNode(node))
        .catch((err: unknown) => {
          if (forbidden(err)) return false;
          throw err;
        }),
    ),
  );
  const onRealNode = ready.some((p) => {
    const at = p.spec?.nodeName ? nodes.indexOf(p.spec.nodeName) : -1;
    return at < 0 || !fake[at];
  });
  if (!onRealNode)
    return { state: 'warn', text: `${operator}: its pods run on kwok's fake nodes, which run no containers` };
  return { state: 'ok', text: `${name} available` };
}

/** One line per operator, reading the local-operators Lease only when some Deployment is missing. */
export async function checkOperators(
  client: KubeClient,
  namespace: string,
  operators: readonly string[],
  now: number = Date.now(),
): Promise<CheckStep[]> {
  const deployments = await Promise.all(
    operators.map((name) =>
      client.getOrUndefined({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name }),
    ),
  );
  let local: LocalOperators | undefined;
  if (deployments.some((d) => d === undefined)) {
    const lease = await client
      .getOrUndefined<LeaseObject>({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace,
        name: LOCAL_OPERATORS_LEASE_NAME,
      })
      .catch((err: unknown) => {
        if (forbidden(err)) return undefined;
        throw err;
      });
    if (lease) local = readLocalOperators(lease, now);
  }
  return Promise.all(
    operators.map((operator, i) => {
      const dep = deployments[i];
      return dep ? withDeployment(client, operator, dep) : withoutDeployment(operator, namespace, local, now);
    }),
  );
}
