import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { Resource } from '../resource.ts';
import { addNamePrefixSuffix } from './name-prefix-suffix.ts';
import { fixNameReferences } from './name-reference.ts';
import { setNamespace } from './namespace.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n';
const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\n';
const SA = 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner}\n';

function build(yaml: string, step: (rs: Resource[]) => void): Resource[] {
  const resources = resourcesFrom(yaml);
  step(resources);
  fixNameReferences(resources);
  return resources;
}

describe('fixNameReferences', () => {
  const prefix = (rs: Resource[]) => addNamePrefixSuffix(rs, 'p-');
  const cases: { name: string; input: string; step: (rs: Resource[]) => void; pick: number; want: string }[] =
    [
      {
        name: 'ConfigMap and Secret references in a pod template',
        input: `${CM}---\n${SECRET}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom: [{configMapRef: {name: cfg}}, {secretRef: {name: creds}}]\n        env: [{name: X, valueFrom: {configMapKeyRef: {name: cfg, key: k}}}, {name: Y, valueFrom: {secretKeyRef: {name: other, key: k}}}]\n      volumes: [{name: v, configMap: {name: cfg}}, {name: w, projected: {sources: [{secret: {name: creds}}]}}, {name: z, secret: {secretName: creds}}]\n      imagePullSecrets: [{name: creds}]`,
        step: prefix,
        pick: 2,
        want: `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: p-d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom: [{configMapRef: {name: p-cfg}}, {secretRef: {name: p-creds}}]\n        env: [{name: X, valueFrom: {configMapKeyRef: {name: p-cfg, key: k}}}, {name: Y, valueFrom: {secretKeyRef: {name: other, key: k}}}]\n      volumes: [{name: v, configMap: {name: p-cfg}}, {name: w, projected: {sources: [{secret: {name: p-creds}}]}}, {name: z, secret: {secretName: p-creds}}]\n      imagePullSecrets: [{name: p-creds}]`,
      },
      {
        name: 'RoleBinding roleRef and ServiceAccount subject with its new namespace',
        input: `${SA}---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects: [{kind: ServiceAccount, name: runner, namespace: default}]`,
        step: (rs) => {
          setNamespace(rs, 'prod');
          addNamePrefixSuffix(rs, 'p-');
        },
        pick: 2,
        want: 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: p-rb, namespace: prod}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: p-reader}\nsubjects: [{kind: ServiceAccount, name: p-runner, namespace: prod}]',
      },
      {
        name: 'roleRef to a ClusterRole is not taken by a Role of the same name',
        input:
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}',
        step: prefix,
        pick: 1,
        want: 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: p-b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}',
      },
      {
        name: 'HPA target, StatefulSet service and PVC claim',
        input:
          'apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {serviceName: svc, template: {spec: {volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}}',
        step: prefix,
        pick: 2,
        want: 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: p-db}\nspec: {serviceName: p-svc, template: {spec: {volumes: [{name: d, persistentVolumeClaim: {claimName: p-data}}]}}}',
      },
      {
        name: 'Ingress backends and TLS secret',
        input: `apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\n${SECRET}---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  defaultBackend: {service: {name: svc}}\n  tls: [{secretName: creds}]\n  rules: [{http: {paths: [{path: /, backend: {service: {name: svc, port: {number: 80}}}}]}}]`,
        step: prefix,
        pick: 2,
        want: 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: p-i}\nspec:\n  defaultBackend: {service: {name: p-svc}}\n  tls: [{secretName: p-creds}]\n  rules: [{http: {paths: [{path: /, backend: {service: {name: p-svc, port: {number: 80}}}}]}}]',
      },
      {
        name: 'a reference in another namespace is left alone',
        input: `${CM}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: elsewhere}\nspec: {volumes: [{name: v, configMap: {name: cfg}}]}`,
        step: (rs) => addNamePrefixSuffix([rs[0]!], 'p-'),
        pick: 1,
        want: 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: elsewhere}\nspec: {volumes: [{name: v, configMap: {name: cfg}}]}',
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = build(c.input, c.step);
      assert.deepEqual(objectsOf(resources)[c.pick], parse(c.want));
    });
  }

  it('follows kustomize v5.8 table: PodTemplate yes, knative ConfigMap refs no', () => {
    const resources = resourcesFrom(
      `${CM}---\n${SECRET}---\napiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate: {spec: {containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]}}\n---\napiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: kn}\nspec: {template: {spec: {containers: [{envFrom: [{configMapRef: {name: cfg}}], env: [{name: a, valueFrom: {secretKeyRef: {name: creds, key: k}}}]}]}}}`,
    );
    addNamePrefixSuffix(resources, 'p-');
    fixNameReferences(resources);
    assert.deepEqual(resources[2]!.object.template, {
      spec: { containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'p-cfg' } }] }] },
    });
    assert.deepEqual(resources[3]!.object.spec, {
      template: {
        spec: {
          containers: [
            {
              envFrom: [{ configMapRef: { name: 'cfg' } }],
              env: [{ name: 'a', valueFrom: { secretKeyRef: { name: 'p-creds', key: 'k' } } }],
            },
          ],
        },
      },
    });
  });

  it('picks the referral with the same prefixes when two were renamed from one name', () => {
    const resources = resourcesFrom(
      `${CM}---\n${CM}---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod}\nspec: {volumes: [{name: v, configMap: {name: cfg}}]}`,
    );
    addNamePrefixSuffix([resources[0]!], 'a-');
    addNamePrefixSuffix([resources[1]!, resources[2]!], 'b-');
    fixNameReferences(resources);
    assert.deepEqual(resources[2]!.object.spec, { volumes: [{ name: 'v', configMap: { name: 'b-cfg' } }] });
  });

  it('refuses an ambiguous reference', () => {
    const resources = resourcesFrom(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg-aaa}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg-bbb}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod}\nspec: {volumes: [{name: v, configMap: {name: cfg}}]}`,
    );
    // As if two generators of the same name had each added a hash suffix.
    for (const r of resources.slice(0, 2)) {
      r.previousIds.push({ group: '', version: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: '' });
    }
    assert.throws(
      () => fixNameReferences(resources),
      /found multiple possible referrals: ConfigMap.v1.\[noGrp\]\/cfg-aaa/,
    );
  });
});
