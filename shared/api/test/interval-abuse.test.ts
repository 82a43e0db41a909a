// Interval abuse (the CVE-2022-39272 class, issue 20 defect 4): `interval: 0s` requeued an object
// in a hot loop and `interval: 1000h` overflowed Node's timers into 1 ms. The CRDs refuse both at
// admission; this runs the generated rules on the real API server.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { installCrds } from '../../../hack/lib/control-plane.ts';
import { crds, type JSONSchemaProps, KINDS, type KindName, sample } from '../src/index.ts';

type Spec = Record<string, unknown>;

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
  await installCrds(client, crds() as unknown as KubeObject[]);
});

/** The sample of `kind` with `spec` merged in; an ImagePolicy interval needs digest reflection. */
function withSpec(kind: KindName, ns: string, spec: Spec): KubeObject & { spec: Spec } {
  const obj = sample(kind, ns) as unknown as KubeObject & { spec: Spec };
  if (kind === 'ImagePolicy' && 'interval' in spec) obj.spec.digestReflectionPolicy = 'Always';
  Object.assign(obj.spec, spec);
  obj.metadata.name = `x-${Math.random().toString(36).slice(2, 10)}`;
  return obj;
}

/** Creates `obj` and returns the API server's refusal; fails the test if it was accepted. */
async function refusal(obj: KubeObject): Promise<string> {
  try {
    await client.create(obj);
  } catch (err) {
    assert.ok(err instanceof ApiError, `unexpected error ${(err as Error).message}`);
    assert.equal(err.statusCode, 422, err.message);
    return err.message;
  }
  assert.fail(`the API server accepted ${obj.kind} with ${JSON.stringify(obj.spec)}`);
}

/** Every duration field at the top of each kind's spec, from the generated CRDs. */
function durationFields(): { kind: KindName; field: string; hours: boolean; maxMessage: string }[] {
  const out: { kind: KindName; field: string; hours: boolean; maxMessage: string }[] = [];
  for (const crd of crds()) {
    const spec = (crd.spec.versions[0]!.schema.openAPIV3Schema.properties as Record<string, JSONSchemaProps>)
      .spec!;
    for (const [field, prop] of Object.entries(spec.properties as Record<string, JSONSchemaProps>)) {
      if (!/^(interval|retryInterval|timeout)$/.test(field)) continue;
      const rules = prop['x-kubernetes-validations'] as { message: string }[];
      const message = rules.find((r) => r.message.startsWith(`${field} must be at least`))!.message;
      out.push({
        kind: crd.spec.names.kind as KindName,
        field,
        hours: String(prop.pattern).includes('|h'),
        maxMessage: message,
      });
    }
  }
  return out;
}

describe('interval abuse: admission', () => {
  test('interval abuse: a Kustomization with interval 0s is refused with the bounds message', async (t) => {
    const ns = await testNamespace(t, 'abuse-zero');
    const message = await refusal(withSpec('Kustomization', ns, { interval: '0s' }));
    assert.match(
      message,
      /spec\.interval: Invalid value: "0s": interval must be at least 1s and at most 168h/,
    );
  });

  test('interval abuse: a GitRepository with interval 1000000h or 1000h is refused', async (t) => {
    const ns = await testNamespace(t, 'abuse-huge');
    for (const interval of ['1000000h', '1000h', '168h1ms']) {
      assert.match(
        await refusal(withSpec('GitRepository', ns, { interval })),
        new RegExp(
          `spec\\.interval: Invalid value: "${interval}": interval must be at least 1s and at most 168h`,
        ),
      );
    }
  });

  test('interval abuse: a value past what CEL duration() can hold gets the same message, not a conversion error', async (t) => {
    const ns = await testNamespace(t, 'abuse-overflow');
    for (const interval of ['10000000h', '99999999999h', '1h9999999999s', '9999999999999ms']) {
      const message = await refusal(withSpec('GitRepository', ns, { interval }));
      assert.match(message, /interval must be at least 1s and at most 168h/, message);
      assert.doesNotMatch(message, /conversion error|evaluating rule/, message);
    }
    const message = await refusal(withSpec('GitRepository', ns, { interval: `${'1'.repeat(21)}h` }));
    assert.match(message, /spec\.interval: Too long/, message);
  });

  test('interval abuse: a malformed duration gets only the pattern message', async (t) => {
    const ns = await testNamespace(t, 'abuse-pattern');
    const message = await refusal(withSpec('GitRepository', ns, { interval: 'every 5 minutes' }));
    assert.match(message, /spec\.interval.*should match/);
    assert.doesNotMatch(message, /must be at least|evaluating rule/, message);
  });

  test('interval abuse: every duration field of every kind refuses 0s and 1000000h, naming itself', async (t) => {
    const ns = await testNamespace(t, 'abuse-fields');
    const fields = durationFields();
    // Each kind with a duration field is covered; the spec walk found them all.
    assert.deepEqual(
      [...new Set(fields.map((f) => f.kind))].sort(),
      KINDS.filter((k) =>
        ['interval', 'timeout', 'retryInterval'].some((f) => f in (k.spec.properties ?? {})),
      )
        .map((k) => k.kind)
        .sort(),
    );
    for (const { kind, field, hours, maxMessage } of fields) {
      for (const value of ['0s', '0ms', hours ? '1000000h' : '1000000m']) {
        const message = await refusal(withSpec(kind, ns, { [field]: value }));
        assert.ok(
          message.includes(`spec.${field}: Invalid value: "${value}": ${maxMessage}`),
          `${kind} .spec.${field}=${value}: ${message}`,
        );
      }
    }
  });

  test('interval abuse: the bounds themselves and ordinary values are accepted', async (t) => {
    const ns = await testNamespace(t, 'abuse-bounds');
    const accepted: [KindName, Spec][] = [
      ['GitRepository', { interval: '1s', timeout: '1440m' }],
      ['GitRepository', { interval: '168h', timeout: '1s' }],
      ['GitRepository', { interval: '1000ms', timeout: '90s' }],
      ['GitRepository', { interval: '0.5s500ms' }],
      // Seven digits of milliseconds is 16m40s: the oversized-term guard must not refuse it.
      ['GitRepository', { interval: '1000000ms' }],
      ['GitRepository', { interval: '1h30m15s500ms' }],
      ['Kustomization', { interval: '10m', retryInterval: '1s', timeout: '24h' }],
      ['Kustomization', { interval: '167h59m59s', retryInterval: '168h', timeout: '23h59m' }],
      ['Receiver', {}],
    ];
    for (const [kind, spec] of accepted) {
      const created = await client.create(withSpec(kind, ns, spec));
      assert.equal(created.kind, kind, JSON.stringify(spec));
    }
  });

  test('interval abuse: timeouts stop at 24h (1440m where the field has no hours)', async (t) => {
    const ns = await testNamespace(t, 'abuse-timeout');
    assert.match(
      await refusal(withSpec('GitRepository', ns, { timeout: '1441m' })),
      /spec\.timeout: Invalid value: "1441m": timeout must be at least 1s and at most 1440m/,
    );
    assert.match(
      await refusal(withSpec('Kustomization', ns, { timeout: '24h1s' })),
      /spec\.timeout: Invalid value: "24h1s": timeout must be at least 1s and at most 24h/,
    );
    assert.match(
      await refusal(withSpec('Kustomization', ns, { retryInterval: '999ms' })),
      /spec\.retryInterval: Invalid value: "999ms": retryInterval must be at least 1s and at most 168h/,
    );
  });
});
