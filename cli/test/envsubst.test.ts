// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Flux's ${var} syntax is the subject here, not a template mistake.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toYAML } from '@mooring/kustomize';
import { substituteVariables } from '@mooring/kustomize-operator/substitute';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const INPUT = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-\${CLUSTER}
  namespace: apps
data:
  cluster: \${CLUSTER}
  region: \${REGION:=eu-west-1}
  empty-default: \${EMPTY:=filled}
  escaped: $\${CLUSTER}
  shell: $CLUSTER
  unset: prefix-\${MOORING_ENVSUBST_UNSET}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: \${REPLICAS}
`;

const VARS = { CLUSTER: 'prod', EMPTY: '', REPLICAS: '3' };
// Unset for certain in the child, whatever the test runner's environment holds.
const ENV = { ...VARS, REGION: undefined, MOORING_ENVSUBST_UNSET: undefined };

const docs = (yaml: string): Record<string, unknown>[] =>
  parseAllDocuments(yaml).map((d) => d.toJS() as Record<string, unknown>);

test('envsubst substitutes variables and defaults, keeps $${} as a literal and $VAR untouched', async () => {
  const r = await mooring(['envsubst'], { env: ENV, input: INPUT });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const [cm, deploy] = docs(r.stdout) as [
    { metadata: { name: string }; data: Record<string, unknown> },
    { spec: { replicas: unknown } },
  ];
  assert.equal(cm.metadata.name, 'settings-prod');
  assert.deepEqual(cm.data, {
    cluster: 'prod',
    region: 'eu-west-1',
    'empty-default': 'filled',
    escaped: '${CLUSTER}',
    shell: '$CLUSTER',
    unset: 'prefix-',
  });
  // As in the operator, a number substituted into an unquoted field reads back as a number.
  assert.equal(deploy.spec.replicas, 3);
});

test('envsubst prints exactly what the kustomize operator substitutes for the same input', async () => {
  const r = await mooring(['envsubst'], { env: ENV, input: INPUT });
  assert.equal(r.code, 0, r.stderr);
  const operator = docs(INPUT).map((obj) =>
    substituteVariables(obj, VARS, { strict: false, strategy: 'Always' }, String(obj.kind)),
  );
  assert.equal(r.stdout, toYAML(operator.map((object) => ({ object: object as never, previousIds: [] }))));
});

test('envsubst --strict fails on an unset variable without a default, naming it', async () => {
  const r = await mooring(['envsubst', '--strict'], { env: ENV, input: INPUT });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /variable 'MOORING_ENVSUBST_UNSET' is not set/);
  assert.match(r.stderr, /ConfigMap\/apps\/settings-\$\{CLUSTER\}/);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);

  // Defaults and set variables are enough for strict mode.
  const defaulted = await mooring(['envsubst', '--strict'], {
    env: ENV,
    input: 'a: ${CLUSTER}\nb: ${REGION:=eu}\nc: $${NOT_A_REFERENCE}\n',
  });
  assert.equal(defaulted.code, 0, defaulted.stderr);
  assert.deepEqual(docs(defaulted.stdout), [{ a: 'prod', b: 'eu', c: '${NOT_A_REFERENCE}' }]);
});

test('envsubst refuses input that is not YAML objects rather than guess', async () => {
  const r = await mooring(['envsubst'], { env: ENV, input: 'plain text ${CLUSTER}\n' });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /stdin document 1 is not a YAML object/);
});
