// The Alert and Receiver steps on their own, through their real signatures, against a stub client
// (no cluster; operators/notification/test keeps the real API server), and their step lists
// against docs/architecture.md's table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Alert, Receiver } from '@mooring/api';
import {
  ApiError,
  type KubeClient,
  type ReconcileContext,
  RetryableError,
  type RuntimeLogger,
  runSteps,
  StalledError,
} from '@mooring/runtime';
import { ALERT_STEPS, type AlertRun } from './alert-steps.ts';
import { RECEIVER_STEPS, type ReceiverRun } from './receiver-steps.ts';
import { webhookPath } from './webhook-path.ts';

const NS = 'apps';
const quiet: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

/** A client whose GET answers from `objects` (by kind/namespace/name), 404 otherwise. */
function stubClient(objects: Record<string, unknown>): Pick<KubeClient, 'get'> {
  return {
    get: async (ref: { kind: string; namespace?: string; name: string }) => {
      const obj = objects[`${ref.kind}/${ref.namespace}/${ref.name}`];
      if (!obj) throw new ApiError('GET', `/${ref.kind}/${ref.name}`, 404, undefined, 'not found');
      return obj;
    },
  } as Pick<KubeClient, 'get'>;
}

async function fails(
  steps: Promise<unknown>,
  type: typeof StalledError | typeof RetryableError,
  reason: string,
  message: RegExp,
) {
  await assert.rejects(steps, (err: Error & { reason?: string }) => {
    assert.ok(err instanceof type, `${err.name}: ${err.message}`);
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    return true;
  });
}

function alertRun(
  spec: Partial<Alert['spec']>,
  objects: Record<string, unknown>,
  noCrossNamespaceRefs = false,
): AlertRun {
  const obj = {
    metadata: { name: 'deploys', namespace: NS },
    spec: { providerRef: { name: 'slack' }, eventSources: [{ kind: 'Kustomization', name: '*' }], ...spec },
  } as Alert;
  return { obj, client: stubClient(objects), noCrossNamespaceRefs, namespace: NS, id: `Alert ${NS}/deploys` };
}

test('Alert steps: bad patterns and cross-namespace sources stall, a missing Provider is retried, otherwise it passes', async () => {
  const provider = { [`Provider/${NS}/slack`]: { metadata: { name: 'slack' } } };
  await fails(
    runSteps(ALERT_STEPS, alertRun({ inclusionList: ['('] }, provider)),
    StalledError,
    'InvalidConfig',
    /^Alert apps\/deploys: /,
  );
  await fails(
    runSteps(
      ALERT_STEPS,
      alertRun({ eventSources: [{ kind: 'Kustomization', name: 'a', namespace: 'other' }] }, provider, true),
    ),
    StalledError,
    'AccessDenied',
    /event source Kustomization other\/a is in another namespace/,
  );
  await fails(
    runSteps(ALERT_STEPS, alertRun({}, {})),
    RetryableError,
    'ProviderNotFound',
    /Provider slack was not found/,
  );
  assert.deepEqual(await runSteps(ALERT_STEPS, alertRun({}, provider)), {});
});

function receiverRun(spec: Partial<Receiver['spec']>, objects: Record<string, unknown>): ReceiverRun {
  const obj = {
    metadata: { name: 'hook', namespace: NS },
    spec: {
      type: 'generic',
      resources: [{ kind: 'GitRepository', name: 'site' }],
      secretRef: { name: 'token' },
      ...spec,
    },
  } as Receiver;
  const ctx = { status: {}, log: quiet } as unknown as ReconcileContext;
  return {
    obj,
    ctx,
    client: stubClient(objects),
    noCrossNamespaceRefs: false,
    namespace: NS,
    name: 'hook',
    id: `Receiver ${NS}/hook`,
  };
}

test('Receiver steps: an unknown type stalls, a missing Secret or token key is retried, otherwise the webhook path is published', async () => {
  const secret = (data: Record<string, string>) => ({
    [`Secret/${NS}/token`]: {
      metadata: { name: 'token' },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    },
  });
  await fails(
    runSteps(RECEIVER_STEPS, receiverRun({ type: 'carrier-pigeon' } as never, secret({ token: 't' }))),
    StalledError,
    'ValidationFailed',
    /type carrier-pigeon is not supported/,
  );
  await fails(
    runSteps(RECEIVER_STEPS, receiverRun({}, {})),
    RetryableError,
    'TokenNotFound',
    /Secret apps\/token was not found/,
  );
  await fails(
    runSteps(RECEIVER_STEPS, receiverRun({}, secret({ other: 'x' }))),
    RetryableError,
    'TokenNotFound',
    /has no 'token' key/,
  );
  const run = receiverRun({}, secret({ token: 's3cret' }));
  await runSteps(RECEIVER_STEPS, run);
  assert.equal(run.path, webhookPath('s3cret', 'hook', NS));
  assert.equal(run.ctx.status.webhookPath, run.path);
});

test("docs/architecture.md's step table names the Alert's and the Receiver's steps, in order", () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/architecture.md', import.meta.url)), 'utf8');
  const row = (kind: string) => {
    const line = doc.split('\n').find((l) => l.startsWith(`| ${kind} (`));
    assert.ok(line, `no row for ${kind}`);
    const steps = line.split('|')[2]!.replace(/\([^)]*\)/g, '');
    return steps.split('→').map((s) => s.trim());
  };
  const names = (steps: readonly { name: string }[]) => steps.map((s) => s.name);
  assert.deepEqual(row('Alert'), names(ALERT_STEPS));
  assert.deepEqual(row('Receiver'), names(RECEIVER_STEPS));
});
