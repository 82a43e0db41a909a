import type { KubeObject } from '@mooring/runtime';
import { CliError, EXIT_ERROR } from './cli-error.ts';

/** Label on every object `create tenant` writes: Flux's `toolkit.fluxcd.io/tenant` under mooring.dev. */
export const TENANT_LABEL = 'mooring.dev/tenant';

/** The user a namespace's reconciler acts as when no ServiceAccount is named; Flux's `gotk:<ns>:reconciler`. */
export const reconcilerUser = (namespace: string): string => `mooring:${namespace}:reconciler`;

export interface TenantOptions {
  tenant: string;
  namespaces: string[];
  clusterRole: string;
  /** ServiceAccount name; the tenant name when absent. */
  account?: string;
  labels?: Record<string, string>;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RBAC = 'rbac.authorization.k8s.io';

function requireLabel(value: string, what: string): void {
  if (value.length > 63 || !DNS1123_LABEL.test(value))
    throw new CliError(
      `${what} '${value}' is not a DNS-1123 label: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit.`,
      EXIT_ERROR,
    );
}

/** Checks every name before anything is built, so a bad flag never leaves half a tenant behind. */
export function validateTenant(opts: TenantOptions): void {
  // The tenant name is a label value and the default ServiceAccount name: a DNS-1123 label is both.
  requireLabel(opts.tenant, 'tenant name');
  if (opts.namespaces.length === 0)
    throw new CliError('a tenant needs a namespace: pass --with-namespace <ns>.', EXIT_ERROR);
  for (const ns of opts.namespaces) requireLabel(ns, '--with-namespace');
  if (opts.account !== undefined && (opts.account.length > 253 || !DNS1123_SUBDOMAIN.test(opts.account)))
    throw new CliError(
      `--account '${opts.account}' is not a DNS-1123 subdomain: use lowercase letters, digits, '-' and '.'.`,
      EXIT_ERROR,
    );
  // ClusterRole names may hold ':' (system:aggregate-to-edit); only path separators are unusable.
  if (
    !opts.clusterRole ||
    /[/%]/.test(opts.clusterRole) ||
    opts.clusterRole === '.' ||
    opts.clusterRole === '..'
  )
    throw new CliError(
      `--cluster-role '${opts.clusterRole}' is not a ClusterRole name: pass one that 'kubectl get clusterroles' lists.`,
      EXIT_ERROR,
    );
}

/**
 * For each namespace, in apply order: the Namespace, the tenant's ServiceAccount, and a RoleBinding
 * that grants the ClusterRole inside that namespace only, to the ServiceAccount and the reconciler user.
 */
export function tenantObjects(opts: TenantOptions): KubeObject[] {
  validateTenant(opts);
  const account = opts.account ?? opts.tenant;
  // A fresh copy per object: a shared one would come out of the YAML emitter as an anchor and alias.
  const labels = (): Record<string, string> => ({ ...opts.labels, [TENANT_LABEL]: opts.tenant });
  return [...new Set(opts.namespaces)].flatMap((namespace): KubeObject[] => [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: labels() } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace, labels: labels() } },
    {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `${opts.tenant}-reconciler`, namespace, labels: labels() },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: opts.clusterRole },
      subjects: [
        { apiGroup: RBAC, kind: 'User', name: reconcilerUser(namespace) },
        { kind: 'ServiceAccount', name: account, namespace },
      ],
    },
  ]);
}
