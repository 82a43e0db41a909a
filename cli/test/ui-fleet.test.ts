// The fleet view of a KustomizationSet, against the real control plane with the operators
// running: a list generator of two elements on this cluster, rolled out in two steps. The API
// returns the set with its members, the graph links it to them, and the page in chromium lists
// them with their Ready state; a template change that fails its first step turns the page red
// with the step, the failed member and its message, and leaves the second on its old revision.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { REPO_ROOT } from '../src/cli-paths.ts';
import type { ObjectDetail } from '../src/ui/object-detail.ts';
import type { Graph } from '../src/ui/object-graph.ts';
import type { RowPage } from '../src/ui/object-index.ts';
import { startUiServer } from '../src/ui/ui-server.ts';
import { startGitOpsOperators } from './gitops-operators.ts';
import { openBrowser } from './ui-browser.ts';
import { call } from './ui-http.ts';

// As in ui-browser.test.ts: MOORING_UI_SCREENSHOTS=docs/ui writes over the docs' copies.
const SHOTS = resolve(REPO_ROOT, process.env.MOORING_UI_SCREENSHOTS ?? '.mooring/ui-screenshots');
// Patience, not speed: a loaded machine may take minutes.
const WAIT = 240_000;
const TOKEN = 'fleet-test-token';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  member: ${name}\n`;

test('mooring ui: the fleet view of a KustomizationSet, its members, graph edges and a failed step', async (t) => {
  const ns = await testNamespace(t, 'ui-fleet');
  const { client } = await testCluster();
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('fleet');
  await repo.commit({
    'first/kustomization.yaml': 'resources: [cm.yaml]\n',
    'first/cm.yaml': configMap('agent-first'),
    'second/kustomization.yaml': 'resources: [cm.yaml]\n',
    'second/cm.yaml': configMap('agent-second'),
  });
  await startGitOpsOperators(t, ns);
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'fleet', namespace: ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  });
  const setKey = {
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'KustomizationSet',
    namespace: ns,
    name: 'agents',
  };
  await client.create({
    ...setKey,
    metadata: { name: 'agents', namespace: ns },
    spec: {
      interval: '5s',
      generators: [
        {
          list: {
            elements: [
              { name: 'first', labels: { wave: 'first' } },
              { name: 'second', labels: { wave: 'second' } },
            ],
          },
        },
      ],
      strategy: { rollingUpdate: { steps: [{ selector: { matchLabels: { wave: 'first' } } }] } },
      template: {
        metadata: { name: 'agent-{{ .name }}', labels: { wave: '{{ .name }}' } },
        spec: {
          sourceRef: { kind: 'GitRepository', name: 'fleet' },
          path: './{{ .name }}',
          interval: '1h',
          retryInterval: '3s',
          prune: true,
          targetNamespace: ns,
        },
      },
    },
  } as KubeObject);

  const ui = await startUiServer({ client, namespace: ns, port: 0, token: TOKEN });
  t.after(() => ui.close());
  const auth = { host: `127.0.0.1:${ui.port}`, cookie: `mooring_ui_token=${TOKEN}` };
  const getJson = async <T>(path: string): Promise<T> => {
    const reply = await call(ui.port, path, { headers: auth });
    assert.equal(reply.status, 200, reply.body);
    return JSON.parse(reply.body) as T;
  };
  const setPage = () => getJson<ObjectDetail>(`/api/object/KustomizationSet/${ns}/agents`);

  // The API: the set with both members Ready at the target revision, and no "why".
  const settled = await eventually(
    'both members Ready at the target revision',
    async () => {
      const d = await setPage().catch(() => undefined);
      const ok =
        d?.fleet?.members.length === 2 && d.fleet.members.every((m) => m.ready === 'True' && m.atTarget);
      return ok && d.conditions.some((c) => c.type === 'Ready' && c.status === 'True') && d;
    },
    WAIT,
  );
  const fleet = settled.fleet!;
  assert.deepEqual(
    fleet.members.map((m) => [m.name, m.kind, m.objectName, m.exists]),
    [
      ['agent-first', 'Kustomization', 'agent-first', true],
      ['agent-second', 'Kustomization', 'agent-second', true],
    ],
  );
  assert.match(fleet.members[0]!.appliedRevision, /@sha1:[0-9a-f]{40}$/);
  assert.equal(fleet.counts.total, 2);
  assert.equal(fleet.counts.ready, 2);
  assert.deepEqual(
    fleet.steps.map((s) => [s.step, s.selects, s.state]),
    [
      [1, 'wave=first', 'done'],
      [2, 'every other member', 'done'],
    ],
  );
  assert.equal(settled.why, undefined);

  // The overview: the set's row with its target revision and member counts; the graph: set → members.
  const rows = await getJson<RowPage>('/api/objects?kind=KustomizationSet');
  assert.equal(rows.total, 1);
  assert.deepEqual(rows.rows[0]!.members, { total: 2, ready: 2 });
  assert.equal(rows.rows[0]!.revision, fleet.targetRevision);
  const graph = await getJson<Graph>(`/api/graph?namespace=${ns}`);
  for (const member of ['agent-first', 'agent-second'])
    assert.ok(
      graph.edges.some(
        (e) =>
          e.type === 'member' &&
          e.from === `KustomizationSet/${ns}/agents` &&
          e.to === `Kustomization/${ns}/${member}`,
      ),
      `a member edge to ${member}`,
    );

  // The page in chromium: one row per member with its Ready state and a link to its own page.
  const { page } = await openBrowser(t);
  page.setDefaultTimeout(WAIT);
  await mkdir(SHOTS, { recursive: true });
  await page.goto(ui.url);
  await page.goto(`${ui.url.replace(/\?.*/, '')}#/object/KustomizationSet/${ns}/agents`);
  const member = (name: string) => page.locator(`tr[data-member="${name}"]`);
  for (const name of ['agent-first', 'agent-second']) {
    await member(name).and(page.locator('[data-ready="True"]')).waitFor();
    assert.match((await member(name).textContent()) ?? '', /ready/);
  }
  assert.equal(
    await member('agent-first').getByRole('link', { name: 'Kustomization agent-first' }).getAttribute('href'),
    `#/object/Kustomization/${ns}/agent-first`,
  );
  assert.match((await page.getByTestId('fleet-counts').textContent()) ?? '', /^2 of 2 Ready/);
  await page.screenshot({ path: join(SHOTS, 'fleet.png'), fullPage: true });

  // A template change whose first step fails: the rollout stops there, the page says why (live,
  // through the watch), and the second member keeps the previous revision.
  await client.mergePatch(setKey, { spec: { template: { spec: { path: './missing/{{ .name }}' } } } });
  const why = page.getByTestId('why');
  await why.filter({ hasText: /rollout failed at step 1/ }).waitFor();
  assert.match(
    (await why.textContent()) ?? '',
    new RegExp(
      `^KustomizationSet ${ns}/agents: the rollout failed at step 1 of 2, .*agent-first \\(Failed: .*missing`,
    ),
  );
  await page.locator('li[data-step="1"][data-state="failed"]').waitFor();
  await member('agent-second').and(page.locator('[data-ready="True"]')).waitFor();
  assert.match((await member('agent-second').textContent()) ?? '', /previous template/);
  await page.screenshot({ path: join(SHOTS, 'fleet-failed.png'), fullPage: true });
  const failed = await setPage();
  assert.equal(failed.fleet?.rollout.phase, 'Failed');
  assert.deepEqual(failed.why?.blocking, { kind: 'Kustomization', namespace: ns, name: 'agent-first' });
  assert.equal(failed.fleet?.members.find((m) => m.name === 'agent-second')?.state, 'Outdated');

  // Suspend from the fleet page, as the user: the set's spec changes.
  await page.getByRole('button', { name: 'Suspend' }).click();
  await eventually(
    'the set suspended',
    async () => ((await client.get(setKey)).spec as { suspend?: boolean }).suspend === true,
    WAIT,
  );
  await page.getByRole('button', { name: 'Resume' }).waitFor();
});
