import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, RECONCILE_REQUESTED_AT_ANNOTATION, SOURCE_API_VERSION } from '@mooring/api';
import { eventually, GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { REPO_ROOT } from '../src/cli-paths.ts';
import { startUiServer } from '../src/ui/ui-server.ts';
import { startGitOpsOperators } from './gitops-operators.ts';
import { openBrowser } from './ui-browser.ts';

// Every run takes the screenshots; MOORING_UI_SCREENSHOTS=docs/ui writes them over the docs' copies
// (docs/ui.md), so an ordinary test run leaves the tree clean.
const SHOTS = resolve(REPO_ROOT, process.env.MOORING_UI_SCREENSHOTS ?? '.mooring/ui-screenshots');
// DOM waits are patience, not speed: a machine at load 10+ may take minutes where one alone takes seconds.
const WAIT = 240_000;

const configMap = (name: string, data: Record<string, string>): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;

test('mooring ui in chromium: overview, a broken commit and why, the graph, actions and the diff', async (t) => {
  const ns = await testNamespace(t, 'ui-browser');
  const { client } = await testCluster();
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('platform');
  await repo.commit({
    'infra/kustomization.yaml': 'resources: [settings.yaml]\n',
    'infra/settings.yaml': configMap('settings', { registry: 'registry.example' }),
    'apps/kustomization.yaml': 'resources: [server.yaml]\n',
    'apps/server.yaml': configMap('model-server', { model: '1.0.0' }),
  });
  await startGitOpsOperators(t, ns);
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'platform', namespace: ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  });
  const ks = (name: string, dependsOn?: string) => ({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'platform' },
      path: `./${name}`,
      interval: '1h',
      prune: true,
      targetNamespace: ns,
      ...(dependsOn ? { dependsOn: [{ name: dependsOn }] } : {}),
    },
  });
  await client.create(ks('infra'));
  await client.create(ks('apps', 'infra'));

  const ui = await startUiServer({ client, namespace: ns, port: 0 });
  t.after(() => ui.close());
  const { page } = await openBrowser(t);
  page.setDefaultTimeout(WAIT);
  await mkdir(SHOTS, { recursive: true });

  // Overview: the three objects, all Ready once the operators have applied them.
  await page.goto(ui.url);
  const row = (key: string) => page.locator(`tr[data-key="${key}"]`);
  for (const key of [`GitRepository/${ns}/platform`, `Kustomization/${ns}/infra`, `Kustomization/${ns}/apps`])
    await row(key).and(page.locator('[data-state="ready"]')).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 3);
  await page.screenshot({ path: join(SHOTS, 'overview.png') });

  // Graph: the dependsOn edge from infra to apps, and the applied ConfigMaps.
  await page.goto(`${ui.url.replace(/\?.*/, '')}#/graph`);
  await page
    .locator(`path.edge.dependsOn[data-from="Kustomization/${ns}/infra"][data-to="Kustomization/${ns}/apps"]`)
    .waitFor({ state: 'attached' });
  await page.locator(`g.node[data-id="ConfigMap/${ns}/model-server"]`).waitFor();
  await page.screenshot({ path: join(SHOTS, 'graph.png') });
  // The name filter draws the trees whose name matches (infra's alone) and keeps the source.
  await page.getByLabel('Name contains').fill('infra');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.waitForURL(/#\/graph\?search=infra$/);
  await page.locator(`g.node[data-id="Kustomization/${ns}/apps"]`).waitFor({ state: 'detached' });
  await page.locator(`g.node[data-id="Kustomization/${ns}/infra"]`).waitFor();
  await page.locator(`g.node[data-id="GitRepository/${ns}/platform"]`).waitFor();

  // A broken commit, fetched through the page's "Reconcile with source": apps turns red with the
  // build error, failing first in the overview, and its page says why.
  await repo.commit({ 'apps/kustomization.yaml': 'resources: [server.yaml, missing.yaml]\n' }, 'break apps');
  await page.goto(`${ui.url.replace(/\?.*/, '')}#/object/Kustomization/${ns}/apps`);
  await page.getByRole('button', { name: 'Reconcile with source' }).click();
  await page.getByText(/reconcile requested for GitRepository/).waitFor();
  const why = page.getByTestId('why');
  await why.filter({ hasText: /missing\.yaml/ }).waitFor();
  assert.match(
    (await why.textContent()) ?? '',
    new RegExp(`^Kustomization ${ns}/apps failed: BuildFailed: .*missing\\.yaml`),
  );
  await page.screenshot({ path: join(SHOTS, 'object-why.png') });
  await page.goto(ui.url.replace(/\?.*/, '#/'));
  await row(`Kustomization/${ns}/apps`).and(page.locator('[data-state="failed"]')).waitFor();
  assert.equal(await page.locator('tbody tr').first().getAttribute('data-key'), `Kustomization/${ns}/apps`);
  assert.match((await row(`Kustomization/${ns}/apps`).textContent()) ?? '', /missing\.yaml/);
  await page.screenshot({ path: join(SHOTS, 'overview-failing.png') });

  // Reconcile and suspend from the page change the object on the API server.
  const key = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'infra' };
  const before = (await client.get(key)).metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  await page.goto(`${ui.url.replace(/\?.*/, '')}#/object/Kustomization/${ns}/infra`);
  await page.getByRole('button', { name: 'Reconcile', exact: true }).click();
  await page.getByText(`reconcile requested for Kustomization ${ns}/infra`).waitFor();
  await eventually('the reconcile annotation', async () => {
    const now = (await client.get(key)).metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
    return now !== undefined && now !== before;
  });
  await page.getByRole('button', { name: 'Suspend' }).click();
  await eventually(
    'infra suspended',
    async () => ((await client.get(key)).spec as { suspend?: boolean }).suspend === true,
  );
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  await page.getByText(`Kustomization ${ns}/infra is suspended`).waitFor();
  await page.getByRole('button', { name: 'Resume' }).click();
  await eventually(
    'infra resumed',
    async () => ((await client.get(key)).spec as { suspend?: boolean }).suspend === undefined,
  );
  // The resume asks for a reconcile: let it finish, or it could revert the hand edit below first.
  await eventually('the reconcile the resume asked for', async () => {
    const obj = await client.get(key);
    const asked = obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
    const status = obj.status as {
      lastHandledReconcileAt?: string;
      conditions?: { type: string; status: string }[];
    };
    return (
      asked !== undefined &&
      status.lastHandledReconcileAt === asked &&
      status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
    );
  });

  // The diff view shows a hand edit of what infra applied.
  await client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'settings' },
    { data: { registry: 'hand-edited.example' } },
  );
  await page.goto(`${ui.url.replace(/\?.*/, '')}#/diff/${ns}/infra`);
  await page.locator('[aria-busy="false"]').waitFor();
  const text = (await page.locator('main').textContent()) ?? '';
  assert.match(text, /^-\s+registry: hand-edited\.example$/m);
  assert.match(text, /^\+\s+registry: registry\.example$/m);
  await page.screenshot({ path: join(SHOTS, 'diff.png') });
});
