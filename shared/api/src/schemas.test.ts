import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { KINDS, type KindName, kindDefinition } from './kinds.ts';
import { sample } from './samples.ts';

type Json = Record<string, unknown>;
type Mutation = (spec: Json) => void;

/** Error paths (TypeBox JSON pointers) of `object` against the schema of `kind`. */
function errorPaths(kind: KindName, object: unknown): string[] {
  return [...Value.Errors(kindDefinition(kind).object, object)].map((e) => e.path);
}

function mutated(kind: KindName, mutate: Mutation): Json {
  const object = sample(kind) as unknown as Json;
  mutate(object.spec as Json);
  return object;
}

function at(spec: Json, path: string): Json {
  return path.split('.').reduce<Json>((node, key) => {
    node[key] ??= {};
    return node[key] as Json;
  }, spec);
}

// [case, mutation of the sample's spec, JSON pointer the error must be reported at]
const invalid: Record<KindName, [string, Mutation, string][]> = {
  GitRepository: [
    ['missing url', (s) => delete s.url, '/spec/url'],
    ['bad interval', (s) => (s.interval = '1 minute'), '/spec/interval'],
    ['timeout in hours (Flux allows ms, s, m)', (s) => (s.timeout = '1h'), '/spec/timeout'],
    ['unknown provider', (s) => (s.provider = 'gitlab'), '/spec/provider'],
    ['scp-style url', (s) => (s.url = 'git@example.com:org/repo.git'), '/spec/url'],
    ['verify without secretRef', (s) => (s.verify = { mode: 'HEAD' }), '/spec/verify/secretRef'],
    [
      'unknown verify mode',
      (s) => (s.verify = { mode: 'All', secretRef: { name: 'k' } }),
      '/spec/verify/mode',
    ],
  ],
  OCIRepository: [
    ['missing interval', (s) => delete s.interval, '/spec/interval'],
    ['bad interval', (s) => (s.interval = '5'), '/spec/interval'],
    ['non-oci url', (s) => (s.url = 'https://registry.example.com/x'), '/spec/url'],
    ['unknown provider', (s) => (s.provider = 'oracle'), '/spec/provider'],
    [
      'unknown layer operation',
      (s) => (s.layerSelector = { operation: 'move' }),
      '/spec/layerSelector/operation',
    ],
  ],
  HelmRepository: [
    ['missing url', (s) => delete s.url, '/spec/url'],
    ['ftp url', (s) => (s.url = 'ftp://charts.example.com'), '/spec/url'],
    ['unknown type', (s) => (s.type = 'git'), '/spec/type'],
    ['timeout in hours', (s) => (s.timeout = '1h'), '/spec/timeout'],
  ],
  HelmChart: [
    ['missing chart', (s) => delete s.chart, '/spec/chart'],
    ['missing interval', (s) => delete s.interval, '/spec/interval'],
    ['Bucket source', (s) => (at(s, 'sourceRef').kind = 'Bucket'), '/spec/sourceRef/kind'],
    ['unknown reconcileStrategy', (s) => (s.reconcileStrategy = 'Always'), '/spec/reconcileStrategy'],
  ],
  HelmRelease: [
    ['missing interval', (s) => delete s.interval, '/spec/interval'],
    [
      'chart from a Bucket',
      (s) => (at(s, 'chart.spec.sourceRef').kind = 'Bucket'),
      '/spec/chart/spec/sourceRef/kind',
    ],
    [
      'chartRef to a GitRepository',
      (s) => (s.chartRef = { kind: 'GitRepository', name: 'x' }),
      '/spec/chartRef/kind',
    ],
    ['releaseName over 53', (s) => (s.releaseName = 'r'.repeat(54)), '/spec/releaseName'],
    ['unknown drift mode', (s) => (s.driftDetection = { mode: 'on' }), '/spec/driftDetection/mode'],
    ['unknown CRD policy', (s) => (s.install = { crds: 'Replace' }), '/spec/install/crds'],
    ['dependsOn an Alert', (s) => (s.dependsOn = [{ kind: 'Alert', name: 'a' }]), '/spec/dependsOn/0/kind'],
  ],
  Kustomization: [
    ['missing prune', (s) => delete s.prune, '/spec/prune'],
    ['missing sourceRef', (s) => delete s.sourceRef, '/spec/sourceRef'],
    ['bad retryInterval', (s) => (s.retryInterval = '10'), '/spec/retryInterval'],
    ['unsupported source kind', (s) => (at(s, 'sourceRef').kind = 'Bucket'), '/spec/sourceRef/kind'],
    [
      'decryption provider not sops',
      (s) => (s.decryption = { provider: 'vault' }),
      '/spec/decryption/provider',
    ],
    ['unknown deletionPolicy', (s) => (s.deletionPolicy = 'Never'), '/spec/deletionPolicy'],
    ['targetNamespace over 63', (s) => (s.targetNamespace = 'n'.repeat(64)), '/spec/targetNamespace'],
    [
      'substituteFrom kind',
      (s) => (s.postBuild = { substituteFrom: [{ kind: 'Pod', name: 'v' }] }),
      '/spec/postBuild/substituteFrom/0/kind',
    ],
    [
      'non-string substitute value',
      (s) => (s.postBuild = { substitute: { replicas: 3 } }),
      '/spec/postBuild/substitute',
    ],
  ],
  KustomizationSet: [
    ['no generators', (s) => (s.generators = []), '/spec/generators'],
    ['missing template', (s) => delete s.template, '/spec/template'],
    ['unknown deletionPolicy', (s) => (s.deletionPolicy = 'Prune'), '/spec/deletionPolicy'],
    [
      'maxUnavailable not a count or percent',
      (s) => (s.strategy = { rollingUpdate: { steps: [{ maxUnavailable: 'half' }] } }),
      '/spec/strategy/rollingUpdate/steps/0/maxUnavailable',
    ],
  ],
  Provider: [
    ['missing type', (s) => delete s.type, '/spec/type'],
    ['unknown type', (s) => (s.type = 'email'), '/spec/type'],
    ['timeout in hours', (s) => (s.timeout = '1h'), '/spec/timeout'],
    ['address over 2048', (s) => (s.address = `https://${'a'.repeat(2048)}`), '/spec/address'],
  ],
  Alert: [
    ['missing providerRef', (s) => delete s.providerRef, '/spec/providerRef'],
    ['missing eventSources', (s) => delete s.eventSources, '/spec/eventSources'],
    ['unknown severity', (s) => (s.eventSeverity = 'warning'), '/spec/eventSeverity'],
    [
      'kind Mooring does not serve',
      (s) => (s.eventSources = [{ kind: 'Bucket', name: 'x' }]),
      '/spec/eventSources/0/kind',
    ],
    ['summary over 255', (s) => (s.summary = 's'.repeat(256)), '/spec/summary'],
  ],
  Receiver: [
    ['missing resources', (s) => delete s.resources, '/spec/resources'],
    ['unknown type', (s) => (s.type = 'svn'), '/spec/type'],
    ['bad interval', (s) => (s.interval = '10 m'), '/spec/interval'],
    [
      'empty resource name',
      (s) => (s.resources = [{ kind: 'GitRepository', name: '' }]),
      '/spec/resources/0/name',
    ],
  ],
  ImageRepository: [
    ['missing image', (s) => delete s.image, '/spec/image'],
    ['bad interval', (s) => (s.interval = '1d'), '/spec/interval'],
    ['unknown provider', (s) => (s.provider = 'oracle'), '/spec/provider'],
    ['more than 25 exclusions', (s) => (s.exclusionList = Array(26).fill('^x$')), '/spec/exclusionList'],
  ],
  ImagePolicy: [
    ['missing imageRepositoryRef', (s) => delete s.imageRepositoryRef, '/spec/imageRepositoryRef'],
    ['semver without range', (s) => (s.policy = { semver: {} }), '/spec/policy/semver/range'],
    [
      'unknown order',
      (s) => (s.policy = { alphabetical: { order: 'random' } }),
      '/spec/policy/alphabetical/order',
    ],
    [
      'unknown digestReflectionPolicy',
      (s) => (s.digestReflectionPolicy = 'Sometimes'),
      '/spec/digestReflectionPolicy',
    ],
    ['bad interval', (s) => (s.interval = 'hourly'), '/spec/interval'],
  ],
  ImageUpdateAutomation: [
    ['missing interval', (s) => delete s.interval, '/spec/interval'],
    [
      'missing author email',
      (s) => (s.git = { commit: { author: { name: 'bot' } } }),
      '/spec/git/commit/author/email',
    ],
    ['non-Git source', (s) => (at(s, 'sourceRef').kind = 'OCIRepository'), '/spec/sourceRef/kind'],
    ['unknown update strategy', (s) => (s.update = { strategy: 'Regex' }), '/spec/update/strategy'],
    ['bad interval', (s) => (s.interval = '1y'), '/spec/interval'],
  ],
};

// Fuller manifests of the kind Flux users write, to show the schemas accept real-world specs.
const fuller: Partial<Record<KindName, Mutation>> = {
  GitRepository: (s) =>
    Object.assign(s, {
      ref: { branch: 'main', commit: 'a'.repeat(40) },
      timeout: '90s',
      secretRef: { name: 'git-auth' },
      verify: { mode: 'TagAndHEAD', secretRef: { name: 'keys' } },
      include: [{ repository: { name: 'shared' }, toPath: 'vendor/shared' }],
      sparseCheckout: ['deploy/'],
    }),
  OCIRepository: (s) =>
    Object.assign(s, {
      ref: { semver: '>=1.0.0', semverFilter: '.*-rc.*' },
      layerSelector: { mediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip', operation: 'copy' },
      verify: {
        provider: 'cosign',
        matchOIDCIdentity: [{ issuer: '^https://token.actions.githubusercontent.com$', subject: '.*' }],
      },
    }),
  Kustomization: (s) =>
    Object.assign(s, {
      path: './deploy/production',
      timeout: '3m',
      retryInterval: '2m30s',
      targetNamespace: 'apps',
      dependsOn: [{ name: 'infra', readyExpr: 'dep.status.observedGeneration == dep.metadata.generation' }],
      healthChecks: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'apps' }],
      healthCheckExprs: [
        { apiVersion: 'example.com/v1', kind: 'Widget', current: "status.phase == 'Ready'" },
      ],
      postBuild: {
        substitute: { cluster: 'prod' },
        substituteFrom: [{ kind: 'ConfigMap', name: 'vars', optional: true }],
      },
      decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
      patches: [
        { patch: '- op: replace\n  path: /spec/replicas\n  value: 3', target: { kind: 'Deployment' } },
      ],
      images: [{ name: 'web', newTag: '1.2.3' }],
      commonMetadata: { labels: { team: 'a' } },
      kubeConfig: { secretRef: { name: 'remote', key: 'value.yaml' } },
      deletionPolicy: 'WaitForTermination',
      buildMetadata: ['originAnnotations'],
      ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }],
    }),
  ImagePolicy: (s) =>
    Object.assign(s, {
      policy: { numerical: { order: 'desc' } },
      filterTags: { pattern: '^main-[a-f0-9]+-(?P<ts>[0-9]+)', extract: '$ts' },
      digestReflectionPolicy: 'Always',
      interval: '10m',
    }),
  ImageUpdateAutomation: (s) =>
    Object.assign(s, {
      git: {
        checkout: { ref: { branch: 'main' } },
        commit: {
          author: { email: 'bot@example.com', name: 'bot' },
          signingKey: { secretRef: { name: 'gpg' } },
        },
        push: { branch: 'image-updates', options: { 'merge_request.create': '' } },
      },
      update: { strategy: 'Setters', path: './clusters' },
      policySelector: { matchLabels: { team: 'a' } },
    }),
};

describe('kind schemas', () => {
  for (const def of KINDS) {
    const kind = def.kind as KindName;
    describe(kind, () => {
      test('the minimal sample is valid', () => {
        assert.deepEqual(errorPaths(kind, sample(kind)), []);
      });

      const full = fuller[kind];
      if (full) {
        test('a fuller Flux-style manifest is valid', () => {
          assert.deepEqual(errorPaths(kind, mutated(kind, full)), []);
        });
      }

      for (const [name, mutate, path] of invalid[kind]) {
        test(`rejects ${name}`, () => {
          const paths = errorPaths(kind, mutated(kind, mutate));
          assert.ok(paths.includes(path), `expected an error at ${path}, got ${JSON.stringify(paths)}`);
        });
      }

      test('rejects an object without spec', () => {
        const object = sample(kind) as unknown as Json;
        delete object.spec;
        assert.ok(errorPaths(kind, object).includes('/spec'));
      });
    });
  }
});

describe('status schemas', () => {
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'Succeeded',
    message: 'stored artifact for revision main@sha1:abc',
    lastTransitionTime: '2026-01-02T03:04:05Z',
    observedGeneration: 2,
  };

  test('a status with a Ready condition and an artifact is valid', () => {
    const object = sample('GitRepository') as unknown as Json;
    object.status = {
      observedGeneration: 2,
      conditions: [ready],
      artifact: {
        path: 'gitrepository/default/sample/abc.tar.gz',
        url: 'http://source/gitrepository/default/sample/abc.tar.gz',
        revision: 'main@sha1:abc',
        digest: 'sha256:0123abcd',
        lastUpdateTime: '2026-01-02T03:04:05Z',
        size: 1024,
      },
    };
    assert.deepEqual(errorPaths('GitRepository', object), []);
  });

  const badConditions: [string, Json, string][] = [
    ['status not True/False/Unknown', { ...ready, status: 'Yes' }, '/status/conditions/0/status'],
    ['reason with spaces', { ...ready, reason: 'not camel case' }, '/status/conditions/0/reason'],
    [
      'time not RFC 3339',
      { ...ready, lastTransitionTime: 'yesterday' },
      '/status/conditions/0/lastTransitionTime',
    ],
  ];
  for (const [name, condition, path] of badConditions) {
    test(`rejects a condition with ${name}`, () => {
      const object = sample('Kustomization') as unknown as Json;
      object.status = { conditions: [condition] };
      const paths = errorPaths('Kustomization', object);
      assert.ok(paths.includes(path), `expected an error at ${path}, got ${JSON.stringify(paths)}`);
    });
  }
});

/** Every node of a TypeBox schema with the JSON pointer-ish path it sits at. */
function* nodes(schema: TSchema, path: string): Generator<[string, TSchema]> {
  yield [path, schema];
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
    yield* nodes(child, `${path}.${name}`);
  }
  if (schema.items) yield* nodes(schema.items as TSchema, `${path}[*]`);
  if (typeof schema.additionalProperties === 'object')
    yield* nodes(schema.additionalProperties as TSchema, `${path}[*]`);
}

// The API server refuses a CRD whose defaults do not validate against their own schema.
test('every default is valid against its schema', () => {
  for (const def of KINDS) {
    for (const [path, node] of [...nodes(def.spec, '.spec'), ...nodes(def.status, '.status')]) {
      if (node.default === undefined) continue;
      assert.ok(
        Value.Check(node, node.default),
        `${def.kind}${path}: default ${JSON.stringify(node.default)} is invalid`,
      );
    }
  }
});
