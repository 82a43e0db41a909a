import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { kubectl, testCluster, testNamespace } from '@mooring/test/harness';
import { installCrds } from '../../../hack/lib/control-plane.ts';
import { crds, KINDS, sample, samples } from '../src/index.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
  // From the generator itself, so this test also covers CRDs not yet written to config/crds/.
  await installCrds(client, crds() as unknown as KubeObject[]);
});

/** Creates `obj` and returns the API server's refusal; fails the test if it was accepted. */
async function refusal(obj: KubeObject): Promise<string> {
  try {
    await client.create(obj);
  } catch (err) {
    assert.ok(err instanceof ApiError, `unexpected error ${(err as Error).message}`);
    assert.equal(err.statusCode, 422, err.message);
    return err.message;
  }
  assert.fail(`the API server accepted an invalid ${obj.kind}`);
}

describe('the generated CRDs on the real API server', () => {
  test('accept a valid object of every kind and default its status', async (t) => {
    const ns = await testNamespace(t, 'samples');
    const all = samples(ns);
    assert.equal(all.length, KINDS.length);
    for (const obj of all) {
      const created = await client.create(obj as unknown as KubeObject);
      assert.equal(created.kind, obj.kind);
    }
    const repo = await client.get<KubeObject & { spec: { timeout?: string } }>({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      namespace: ns,
      name: 'sample',
    });
    assert.equal(repo.spec.timeout, '60s', 'the CRD default for timeout was not applied');
  });

  test('refuse a bad duration, naming the field', async (t) => {
    const ns = await testNamespace(t, 'bad-duration');
    const repo = sample('GitRepository', ns) as unknown as KubeObject & { spec: Record<string, unknown> };
    repo.spec.interval = 'every 5 minutes';
    assert.match(await refusal(repo), /spec\.interval/);
  });

  test('refuse an unknown enum value, listing the allowed ones', async (t) => {
    const ns = await testNamespace(t, 'bad-enum');
    const provider = sample('Provider', ns) as unknown as KubeObject & { spec: Record<string, unknown> };
    provider.spec.type = 'carrier-pigeon';
    const message = await refusal(provider);
    assert.match(message, /spec\.type/);
    assert.match(message, /slack/);
  });

  test('refuse a missing required field', async (t) => {
    const ns = await testNamespace(t, 'missing-field');
    const ks = sample('Kustomization', ns) as unknown as KubeObject & { spec: Record<string, unknown> };
    delete ks.spec.sourceRef;
    assert.match(await refusal(ks), /spec\.sourceRef: Required value/);
  });

  test('enforce a cross-field CEL rule', async (t) => {
    const ns = await testNamespace(t, 'cel');
    const policy = sample('ImagePolicy', ns) as unknown as KubeObject & {
      spec: { policy: Record<string, unknown> };
    };
    policy.spec.policy = { semver: { range: '>=1.0.0' }, alphabetical: { order: 'asc' } };
    assert.match(await refusal(policy), /spec\.policy/);
  });

  test('kubectl get mooring lists every kind through the category', async (t) => {
    const ns = await testNamespace(t, 'category');
    for (const obj of samples(ns)) await client.create(obj as unknown as KubeObject);
    const stdout = await kubectl('-n', ns, 'get', 'mooring', '-o', 'name');
    const kinds = new Set(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.split('/')[0]),
    );
    assert.equal(kinds.size, KINDS.length, stdout);
  });
});
