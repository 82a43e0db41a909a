// Hooks split out of a render as Helm splits them: the stream of the sandboxed renderer (and of
// `bin/helm template`) gives the manifest and the hooks `helm install` recorded for the same
// chart and values (testdata/release-records/demo-v1.secret.json, written by the real helm), and
// hooksFor lists them in the order that install ran them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  decodeReleaseSecret,
  deletePoliciesOf,
  HelmRendererPool,
  type HookRecord,
  hooksFor,
  RenderSplitError,
  renderChart,
  splitRender,
} from '../src/index.ts';
import { HELM, requireHelmBinaries } from './helm-oracle.ts';

requireHelmBinaries();

const chartDir = join(import.meta.dirname, 'testdata/hooks-chart');
const installed = decodeReleaseSecret(
  JSON.parse(readFileSync(join(import.meta.dirname, 'testdata/release-records/demo-v1.secret.json'), 'utf8')),
);

async function helmTemplate(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    HELM,
    ['template', 'demo', chartDir, '-n', 'explore-r', ...args],
    {
      env: { HOME: '/nonexistent', PATH: '/usr/bin:/bin' },
    },
  );
  return stdout;
}

/** A hook as recorded before it ever ran: Helm fills last_run and the default policy when it runs. */
const unrun = (h: HookRecord): HookRecord => {
  const { last_run: _run, delete_policies: _policies, ...rest } = h;
  return rest as HookRecord;
};

describe('splitRender', () => {
  const pool = new HelmRendererPool({ size: 1 });
  after(() => pool.close());

  it("gives the manifest and hooks helm install recorded, from the sandboxed renderer's stream", {
    timeout: 300_000,
  }, async () => {
    const stream = await renderChart({
      chartDir,
      releaseName: 'demo',
      namespace: 'explore-r',
      set: ['greeting=hi'],
      limits: { timeoutMs: 120_000, memoryBytes: 1 << 30 },
      pool,
    });
    assert.equal(stream, await helmTemplate('--set', 'greeting=hi'));
    const split = splitRender(stream);
    assert.equal(split.manifest, installed.manifest);
    assert.deepEqual(split.hooks.map(unrun), installed.hooks?.map(unrun));
  });

  it('parses the annotations as Helm does: trimmed lower-case events, test-success is test, a weight that is no integer is 0', async () => {
    const { hooks } = splitRender(await helmTemplate('--set', 'greeting=hi'));
    const byName = new Map(hooks.map((h) => [h.name, h]));
    assert.deepEqual(byName.get('demo-pre-upgrade')?.events, ['pre-upgrade']);
    assert.equal(byName.get('demo-pre-upgrade')?.weight, undefined);
    assert.deepEqual(byName.get('demo-legacy-test')?.events, ['test']);
    assert.deepEqual(byName.get('demo-pre-install-a')?.events, ['pre-install', 'pre-upgrade']);
    assert.deepEqual(byName.get('demo-pre-install-a')?.delete_policies, [
      'before-hook-creation',
      'hook-succeeded',
    ]);
    assert.equal(byName.get('demo-pre-install-first')?.weight, -3);
    // The Secret hook is in the hooks, not in the manifest Mooring applies.
    assert.equal(byName.get('demo-post-install')?.kind, 'Secret');
    assert.doesNotMatch(splitRender(await helmTemplate()).manifest, /helm\.sh\/hook/);
  });

  it('with --skip-tests the test hooks are gone and the rest is the same', async () => {
    const all = splitRender(await helmTemplate());
    const noTests = splitRender(await helmTemplate('--skip-tests'));
    assert.equal(noTests.manifest, all.manifest);
    assert.deepEqual(
      noTests.hooks,
      all.hooks.filter((h) => !h.events?.includes('test')),
    );
  });

  it('a stream without manifests, and documents Helm would skip', () => {
    const stream =
      '\n---\n# Source: c/templates/job.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: post-install\n    helm.sh/hook-weight: 7\n' +
      '---\n# Source: c/templates/odd.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\n  annotations:\n    helm.sh/hook: post-instal\n' +
      '---\n# Source: c/templates/empty.yaml\n\n';
    const split = splitRender(stream);
    assert.equal(split.manifest, '');
    // An unquoted weight is read as its text, as Helm's decoding into a string map does.
    assert.deepEqual(
      split.hooks.map((h) => [h.name, h.weight]),
      [['j', 7]],
    );
  });

  it('a stream that is not one Helm printed is refused', () => {
    assert.throws(() => splitRender('apiVersion: v1\nkind: ConfigMap\n'), RenderSplitError);
    assert.throws(
      () => splitRender('---\n# Source: c/templates/bad.yaml\nkind: [unclosed\n'),
      /YAML parse error on c\/templates\/bad\.yaml/,
    );
  });
});

describe('hooksFor', () => {
  it('lists the hooks of an event in the order helm install ran them: weight, then name', async () => {
    const { hooks } = splitRender(await helmTemplate('--set', 'greeting=hi'));
    const preInstall = hooksFor(hooks, 'pre-install').map((h) => h.name);
    assert.deepEqual(preInstall, ['demo-pre-install-first', 'demo-pre-install-a', 'demo-pre-install-b']);
    // The order the real install ran them in, by the start times it recorded.
    const ran = (installed.hooks ?? [])
      .filter((h) => h.events?.includes('pre-install'))
      .sort((a, b) => (a.last_run.started_at < b.last_run.started_at ? -1 : 1))
      .map((h) => h.name);
    assert.deepEqual(preInstall, ran);
    assert.deepEqual(
      hooksFor(hooks, 'pre-upgrade').map((h) => h.name),
      ['demo-pre-upgrade', 'demo-pre-install-a'],
    );
    assert.deepEqual(
      hooksFor(hooks, 'test').map((h) => h.name),
      ['demo-legacy-test', 'demo-test'],
    );
    assert.deepEqual(hooksFor(hooks, 'post-delete'), []);
  });

  it('equal weights and names keep the recorded (kind) order', () => {
    const h = (name: string, kind: string): HookRecord => ({
      name,
      kind,
      events: ['post-install'],
      last_run: { started_at: '', completed_at: '', phase: '' },
    });
    const hooks = [h('same', 'Secret'), h('same', 'ConfigMap'), h('a', 'Job')];
    assert.deepEqual(
      hooksFor(hooks, 'post-install').map((x) => x.kind),
      ['Job', 'Secret', 'ConfigMap'],
    );
  });

  it("runs a hook that declares no delete policy with Helm's default, as helm install recorded", () => {
    const recorded = new Map((installed.hooks ?? []).map((x) => [x.name, x]));
    const { hooks } = splitRender(installed.manifest ?? '');
    assert.deepEqual(hooks, []);
    for (const name of ['demo-pre-install-b', 'demo-post-install', 'demo-pre-install-a']) {
      const hook = recorded.get(name) as HookRecord;
      const declared = {
        ...hook,
        delete_policies: name === 'demo-pre-install-a' ? hook.delete_policies : undefined,
      };
      assert.deepEqual(deletePoliciesOf(declared), hook.delete_policies);
    }
    assert.deepEqual(
      recorded.get('demo-test')?.delete_policies,
      undefined,
      'a hook that never ran keeps none',
    );
  });
});
