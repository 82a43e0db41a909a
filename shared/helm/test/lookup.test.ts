// Helm's `lookup` answered by the caller (RenderOptions.lookup), never by the renderer itself.
// The callback here is an in-memory fake of a cluster, for this unit test only; the operator
// answers from the real target cluster as the object's service account.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  HelmRendererPool,
  HelmTemplateError,
  HelmTimeoutError,
  LOOKUP_ANSWER_LIMIT,
  type LookupFunction,
  renderChart,
} from '../src/index.ts';
import { helmTemplate, requireHelmBinaries, TESTDATA } from './helm-oracle.ts';

requireHelmBinaries();

const chartDir = join(TESTDATA, 'lookup');
const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
const base = { chartDir, releaseName: 'r', namespace: 'apps' };

/** A fake cluster: a ConfigMap and two Secrets in `apps`, the kube-system Namespace. */
const cluster: Record<string, Record<string, unknown>> = {
  'v1/ConfigMap/apps/settings': {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'apps' },
    data: { color: 'blue', replicas: 3 },
  },
  'v1/Secret/apps/one': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'one', namespace: 'apps' } },
  'v1/Secret/apps/two': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'two', namespace: 'apps' } },
  'v1/Namespace//kube-system': {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'kube-system', uid: 'a1b2' },
  },
};

function fakeLookup(calls: string[]): LookupFunction {
  return async (apiVersion, kind, namespace, name) => {
    calls.push(`${apiVersion} ${kind} ${namespace}/${name}`);
    const ns = kind === 'Namespace' ? '' : namespace; // cluster-scoped: the namespace is ignored
    if (name) return cluster[`${apiVersion}/${kind}/${ns}/${name}`] ?? null;
    const prefix = `${apiVersion}/${kind}/${ns}/`;
    const items = Object.entries(cluster)
      .filter(([k]) => k.startsWith(prefix))
      .map(([, v]) => v);
    return { apiVersion, kind: `${kind}List`, metadata: { resourceVersion: '7' }, items };
  };
}

describe('lookup through the host', () => {
  const pool = new HelmRendererPool({ size: 1 });
  after(() => pool.close());

  it('without a callback, lookup finds nothing, exactly as helm template', { timeout: 300_000 }, async () => {
    const helm = await helmTemplate(base);
    assert.equal(helm.code, 0, helm.stderr);
    assert.equal(await renderChart({ ...base, limits, pool }), helm.stdout);
  });

  it('gets, lists and misses are answered by the callback', { timeout: 300_000 }, async () => {
    const calls: string[] = [];
    const out = await renderChart({ ...base, limits, pool, lookup: fakeLookup(calls) });
    assert.deepEqual(calls, [
      'v1 ConfigMap apps/settings',
      'v1 Secret apps/',
      'v1 Namespace /kube-system',
      'v1 ConfigMap apps/absent',
    ]);
    assert.match(out, /^ {2}color: "blue"$/m);
    // An integer stays an integer, as client-go's unstructured decoding keeps it.
    assert.match(out, /^ {2}replicas: "3"$/m);
    assert.match(out, /^ {2}secrets: one two $/m);
    assert.match(out, /^ {2}listKind: "SecretList"$/m);
    assert.match(out, /^ {2}namespaceUid: "a1b2"$/m);
    // Not found is an empty map, as Helm gives for a 404.
    assert.match(out, /^ {2}missing: "{}"$/m);
    assert.match(out, /^ {2}kept: "created anew"$/m);
  });

  it("the callback's error fails the render as a template error", { timeout: 300_000 }, async () => {
    await assert.rejects(
      renderChart({
        ...base,
        limits,
        pool,
        lookup: async () => {
          throw new Error('configmaps "settings" is forbidden: User "system:serviceaccount:apps:deployer"');
        },
      }),
      (err: unknown) => {
        assert.ok(err instanceof HelmTemplateError, String(err));
        assert.match(err.helmMessage, /error calling lookup: configmaps "settings" is forbidden/);
        return true;
      },
    );
  });

  it('an answer above the size limit fails the render', { timeout: 300_000 }, async () => {
    const huge = { apiVersion: 'v1', kind: 'ConfigMap', data: { big: 'x'.repeat(LOOKUP_ANSWER_LIMIT) } };
    await assert.rejects(renderChart({ ...base, limits, pool, lookup: async () => huge }), (err: unknown) => {
      assert.ok(err instanceof HelmTemplateError, String(err));
      assert.match(err.helmMessage, new RegExp(`above the ${LOOKUP_ANSWER_LIMIT} byte limit`));
      return true;
    });
  });

  it('the time limit holds while a lookup is unanswered, and the next render works', {
    timeout: 300_000,
  }, async () => {
    const never: LookupFunction = () => new Promise(() => {});
    await assert.rejects(
      renderChart({ ...base, limits: { ...limits, timeoutMs: 3_000 }, pool, lookup: never }),
      HelmTimeoutError,
    );
    const out = await renderChart({ ...base, limits, pool, lookup: fakeLookup([]) });
    assert.match(out, /^ {2}color: "blue"$/m);
  });
});
