import type { GvkSelector } from '../res-id.ts';
import type { FieldSpec } from './field-specs.ts';

/** One row of kustomize's nameReference config: a kind that is referred to, and the fields that refer to it. */
export interface NameBackReference {
  target: GvkSelector;
  referrers: FieldSpec[];
}

// kustomize v5.8.0's api/konfig/builtinpluginconsts/namereference.go, as data. The pod-template
// rows repeat per workload kind, so they are built from the per-pod-spec field lists below.

const WORKLOADS: { kind: string; spec: string; version?: string }[] = [
  { kind: 'Pod', spec: 'spec', version: 'v1' },
  { kind: 'PodTemplate', spec: 'template/spec' },
  { kind: 'Deployment', spec: 'spec/template/spec' },
  { kind: 'ReplicaSet', spec: 'spec/template/spec' },
  { kind: 'DaemonSet', spec: 'spec/template/spec' },
  { kind: 'StatefulSet', spec: 'spec/template/spec' },
  { kind: 'Job', spec: 'spec/template/spec' },
  { kind: 'CronJob', spec: 'spec/jobTemplate/spec/template/spec' },
];

const CONFIG_MAP_POD_FIELDS = [
  'volumes/configMap/name',
  'containers/env/valueFrom/configMapKeyRef/name',
  'initContainers/env/valueFrom/configMapKeyRef/name',
  'containers/envFrom/configMapRef/name',
  'initContainers/envFrom/configMapRef/name',
  'volumes/projected/sources/configMap/name',
];

const SECRET_POD_FIELDS = [
  'volumes/secret/secretName',
  'containers/env/valueFrom/secretKeyRef/name',
  'initContainers/env/valueFrom/secretKeyRef/name',
  'containers/envFrom/secretRef/name',
  'initContainers/envFrom/secretRef/name',
  'imagePullSecrets/name',
  'volumes/projected/sources/secret/name',
];

function inWorkloads(fields: string[]): FieldSpec[] {
  return WORKLOADS.flatMap((w) =>
    fields.map((f) => ({
      path: `${w.spec}/${f}`,
      kind: w.kind,
      ...(w.version ? { version: w.version } : {}),
    })),
  );
}

function kinds(path: string, list: string[], extra: Omit<FieldSpec, 'path' | 'kind'> = {}): FieldSpec[] {
  return list.map((kind) => ({ path, kind, ...extra }));
}

const KNATIVE = { group: 'serving.knative.dev', version: 'v1' };
const POD_OWNERS = ['StatefulSet', 'Deployment', 'ReplicationController', 'Job', 'DaemonSet'];

/** The default name-reference table. */
export const NAME_REFERENCE_TABLE: NameBackReference[] = [
  ...['Deployment', 'ReplicationController', 'ReplicaSet', 'StatefulSet'].map((kind) => ({
    target: { kind },
    referrers: [{ path: 'spec/scaleTargetRef/name', kind: 'HorizontalPodAutoscaler' }],
  })),
  {
    target: { kind: 'ConfigMap', version: 'v1' },
    referrers: [
      ...inWorkloads(CONFIG_MAP_POD_FIELDS),
      { path: 'spec/configSource/configMap', kind: 'Node' },
      ...kinds('rules/resourceNames', ['Role', 'ClusterRole']),
      {
        path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap',
        kind: 'Ingress',
      },
    ],
  },
  {
    target: { kind: 'Secret', version: 'v1' },
    referrers: [
      ...inWorkloads(SECRET_POD_FIELDS),
      { path: 'spec/tls/secretName', kind: 'Ingress' },
      { path: 'metadata/annotations/ingress.kubernetes.io\\/auth-secret', kind: 'Ingress' },
      { path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret', kind: 'Ingress' },
      { path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret', kind: 'Ingress' },
      { path: 'imagePullSecrets/name', kind: 'ServiceAccount' },
      ...['secretName', 'adminSecretName', 'userSecretName', 'secretRef'].map((p) => ({
        path: `parameters/${p}`,
        kind: 'StorageClass',
      })),
      ...kinds('rules/resourceNames', ['Role', 'ClusterRole']),
      { path: 'spec/template/spec/containers/env/valueFrom/secretKeyRef/name', kind: 'Service', ...KNATIVE },
      { path: 'spec/azureFile/secretName', kind: 'PersistentVolume' },
    ],
  },
  {
    target: { kind: 'Service', version: 'v1' },
    referrers: [
      { path: 'spec/serviceName', kind: 'StatefulSet', group: 'apps' },
      { path: 'spec/rules/http/paths/backend/serviceName', kind: 'Ingress' },
      { path: 'spec/backend/serviceName', kind: 'Ingress' },
      { path: 'spec/rules/http/paths/backend/service/name', kind: 'Ingress' },
      { path: 'spec/defaultBackend/service/name', kind: 'Ingress' },
      { path: 'spec/service/name', kind: 'APIService', group: 'apiregistration.k8s.io' },
      ...kinds(
        'webhooks/clientConfig/service',
        ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
        {
          group: 'admissionregistration.k8s.io',
        },
      ),
    ],
  },
  {
    target: { kind: 'Role', group: 'rbac.authorization.k8s.io' },
    referrers: [{ path: 'roleRef/name', kind: 'RoleBinding', group: 'rbac.authorization.k8s.io' }],
  },
  {
    target: { kind: 'ClusterRole', group: 'rbac.authorization.k8s.io' },
    referrers: kinds('roleRef/name', ['RoleBinding', 'ClusterRoleBinding'], {
      group: 'rbac.authorization.k8s.io',
    }),
  },
  {
    target: { kind: 'ServiceAccount', version: 'v1' },
    referrers: [
      ...kinds('subjects', ['RoleBinding', 'ClusterRoleBinding'], { group: 'rbac.authorization.k8s.io' }),
      { path: 'spec/serviceAccountName', kind: 'Pod' },
      ...kinds('spec/template/spec/serviceAccountName', POD_OWNERS),
      { path: 'spec/jobTemplate/spec/template/spec/serviceAccountName', kind: 'CronJob' },
    ],
  },
  {
    target: { kind: 'PersistentVolumeClaim', version: 'v1' },
    referrers: [
      { path: 'spec/volumes/persistentVolumeClaim/claimName', kind: 'Pod' },
      ...kinds('spec/template/spec/volumes/persistentVolumeClaim/claimName', POD_OWNERS),
      {
        path: 'spec/jobTemplate/spec/template/spec/volumes/persistentVolumeClaim/claimName',
        kind: 'CronJob',
      },
    ],
  },
  {
    target: { kind: 'PersistentVolume', version: 'v1' },
    referrers: [
      { path: 'spec/volumeName', kind: 'PersistentVolumeClaim' },
      { path: 'rules/resourceNames', kind: 'ClusterRole' },
    ],
  },
  {
    target: { kind: 'StorageClass', version: 'v1', group: 'storage.k8s.io' },
    referrers: [
      ...kinds('spec/storageClassName', ['PersistentVolume', 'PersistentVolumeClaim']),
      { path: 'spec/volumeClaimTemplates/spec/storageClassName', kind: 'StatefulSet' },
    ],
  },
  {
    target: { kind: 'PriorityClass', version: 'v1', group: 'scheduling.k8s.io' },
    referrers: [
      { path: 'spec/priorityClassName', kind: 'Pod' },
      ...kinds('spec/template/spec/priorityClassName', POD_OWNERS),
      { path: 'spec/jobTemplate/spec/template/spec/priorityClassName', kind: 'CronJob' },
    ],
  },
  {
    // kustomize spells this group `networking.k8s.io/v1`, so it never matches a real IngressClass.
    target: { kind: 'IngressClass', version: 'v1', group: 'networking.k8s.io/v1' },
    referrers: [{ path: 'spec/ingressClassName', kind: 'Ingress' }],
  },
  {
    target: { kind: 'ValidatingAdmissionPolicy', group: 'admissionregistration.k8s.io' },
    referrers: [
      {
        path: 'spec/policyName',
        kind: 'ValidatingAdmissionPolicyBinding',
        group: 'admissionregistration.k8s.io',
      },
    ],
  },
];
