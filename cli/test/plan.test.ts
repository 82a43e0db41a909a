// `mooring plan` end to end through the CLI, against a real Git repository with two commits
// (plan-repo.ts): offline, then posting to a loopback server standing in for the Git host.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Recorded, startSink } from '../../operators/notification/test/http-sink.ts';
import { BASE_PASSWORD, createPlanRepo, HEAD_PASSWORD, type PlanRepo } from './plan-repo.ts';
import { mooring } from './run-cli.ts';

const TOKEN = 'plan-token-SECRET-91c2';

let repo: PlanRepo;
before(() => {
  repo = createPlanRepo();
});
after(() => repo.remove());

const plan = (...args: string[]) =>
  mooring(['plan', '--repo', repo.dir, '--base', 'main', '--head', 'change', ...args], {
    env: { MOORING_GIT_TOKEN: TOKEN },
  });

/** The text block of one applier: from its header line to the next header. */
function block(stdout: string, name: string): string {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^[►✔✗] /.test(l) && l.includes(name));
  assert.ok(start >= 0, `no block for ${name} in:\n${stdout}`);
  const end = lines.findIndex((l, i) => i > start && (/^[►✔✗] /.test(l) || l.startsWith('Not affected')));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

function assertNoSecretValues(text: string): void {
  for (const value of [BASE_PASSWORD, HEAD_PASSWORD]) {
    assert.ok(!text.includes(value), 'a Secret value is in the output');
    assert.ok(
      !text.includes(Buffer.from(value).toString('base64')),
      'a Secret value (base64) is in the output',
    );
  }
}

describe('mooring plan', () => {
  test('reports added, changed and deleted objects per Kustomization, a failing one among them, Secrets masked', async () => {
    const r = await plan();
    // One Kustomization fails to render at head: an error, whatever else changes.
    assert.equal(r.code, 1, r.stderr);
    const apps = block(r.stdout, 'Kustomization default/apps');
    assert.match(apps, /1 added, 2 changed, 0 deleted/);
    assert.match(apps, /added ConfigMap\/apps\/flags/);
    // base/app is outside the Kustomization's folder: its change is found through ../../base/app.
    assert.match(
      apps,
      /-\s+- image: registry\.example\/model-server:1\.0\.0\n\+\s+- image: registry\.example\/model-server:1\.1\.0/,
    );
    assert.match(
      apps,
      /changed Secret\/apps\/model-registry[\s\S]*- {2}password: "\*\*\* \(before\)"\n\+ {2}password: "\*\*\* \(after\)"/,
    );
    assertNoSecretValues(r.stdout + r.stderr);

    const infra = block(r.stdout, 'Kustomization default/infra');
    assert.match(infra, /0 added, 0 changed, 1 deleted/);
    assert.match(infra, /deleted ConfigMap\/apps\/settings/);
    assert.doesNotMatch(infra, /budget exceeded/);

    assert.match(
      block(r.stdout, 'Kustomization default/broken'),
      /render failed: kustomize build failed: .*not-there\.yaml/,
    );

    const release = block(r.stdout, 'HelmRelease default/agent');
    assert.match(release, /changed Deployment\/apps\/apps-agent/);
    assert.match(release, /- {2}replicas: 1\n\+ {2}replicas: 3/);
  });

  test('flags a Kustomization over its deletion budget (default 50 %)', async () => {
    const r = await plan();
    const bulk = block(r.stdout, 'Kustomization default/bulk');
    assert.match(bulk, /0 added, 0 changed, 3 deleted/);
    assert.match(bulk, /deletion budget exceeded: 3 deletions, the default budget 50% allows 2/);
  });

  test('renders only what the change reaches, and only Kustomizations of this repository', async () => {
    const r = await plan('--output', 'json');
    const json = JSON.parse(r.stdout) as {
      appliers: { kind: string; name: string }[];
      unaffected: string[];
      otherSources: string[];
      exitCode: number;
    };
    // `other` fails to render at both commits, so a render of it would be an error in the plan.
    assert.deepEqual(json.unaffected, ['Kustomization/default/other']);
    assert.ok(!json.appliers.some((a) => a.name === 'other'));
    assert.deepEqual(json.otherSources, ['Kustomization/default/foreign']);
    assert.deepEqual(json.appliers.map((a) => `${a.kind}/${a.name}`).sort(), [
      'HelmRelease/agent',
      'Kustomization/apps',
      'Kustomization/broken',
      'Kustomization/bulk',
      'Kustomization/infra',
    ]);
    assert.equal(json.exitCode, 1);
  });

  test('exit codes: 2 for changes without errors, 0 for no change, 1 for a usage error', async () => {
    const changes = await plan('--path', 'clusters/demo/apps.yaml');
    assert.equal(changes.code, 2, changes.stderr);
    assert.doesNotMatch(changes.stdout, /default\/broken/);

    const none = await mooring(['plan', '--repo', repo.dir, '--base', 'change', '--head', 'change']);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /0 rendered, 0 with changes/);

    const usage = await mooring(['plan', '--repo', repo.dir]);
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /--base/);
    const noneOfOurs = await plan('--source', 'default/not-declared');
    assert.equal(noneOfOurs.code, 1);
    assert.match(
      noneOfOurs.stderr,
      /none of the 7 Kustomizations and HelmReleases declared here reads this repository \(GitRepository default\/not-declared \(--source\)\): pass --source/,
    );
    const badRef = await mooring(['plan', '--repo', repo.dir, '--base', 'no-such-branch']);
    assert.equal(badRef.code, 1);
    assert.match(badRef.stderr, /--base no-such-branch is not a commit/);
  });

  test('--output markdown: a counts table and one collapsible section per Kustomization', async () => {
    const r = await plan('--output', 'markdown');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^<!-- mooring-plan -->\n### Mooring plan: `[0-9a-f]{12}` against `[0-9a-f]{12}`/);
    assert.match(r.stdout, /\| Kustomization default\/apps \| 1 \| 2 \| 0 \| changes \|/);
    assert.match(r.stdout, /\| Kustomization default\/bulk \| 0 \| 0 \| 3 \| ⚠️ deletion budget exceeded \|/);
    assert.match(r.stdout, /\| Kustomization default\/broken \| 0 \| 0 \| 0 \| ❌ render failed \|/);
    assert.match(
      r.stdout,
      /<details><summary><b>Kustomization default\/apps<\/b>: 1 added, 2 changed, 0 deleted<\/summary>/,
    );
    assert.match(r.stdout, /```diff\n--- base\/Deployment\/apps\/model-server/);
    assert.equal((r.stdout.match(/<details>/g) ?? []).length, 5);
    assertNoSecretValues(r.stdout);
  });

  for (const host of ['github', 'gitlab'] as const) {
    test(`--post ${host}: the comment and the head's commit status, as the notification Providers send them`, async (t) => {
      const sink = await startSink(t);
      const r = await plan(
        '--post',
        host,
        '--pr',
        '7',
        '--repo-url',
        `${sink.url}/acme/platform.git`,
        '--output',
        'json',
      );
      assert.equal(r.code, 1, r.stderr);
      const [comment, status] = (await sink.received(2)) as [Recorded, Recorded];
      const api = host === 'github' ? '/api/v3/repos/acme/platform' : '/api/v4/projects/acme%2Fplatform';
      assert.equal(comment.method, 'POST');
      assert.equal(
        comment.url,
        host === 'github' ? `${api}/issues/7/comments` : `${api}/merge_requests/7/notes`,
      );
      assert.equal(status.url, `${api}/statuses/${repo.head}`);
      for (const req of [comment, status]) {
        assert.equal(req.headers['content-type'], 'application/json');
        if (host === 'github') {
          assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
          assert.equal(req.headers.accept, 'application/vnd.github+json');
        } else assert.equal(req.headers['private-token'], TOKEN);
      }
      const body = JSON.parse(comment.body) as { body: string };
      assert.match(body.body, /^<!-- mooring-plan -->/);
      assert.match(body.body, /<details><summary><b>Kustomization default\/infra<\/b>/);
      assertNoSecretValues(body.body);
      // A failed render and a budget exceeded make the status a failure.
      assert.deepEqual(JSON.parse(status.body), {
        state: host === 'github' ? 'failure' : 'failed',
        [host === 'github' ? 'context' : 'name']: 'mooring/plan',
        description: '5 rendered, 4 with changes, 1 failed, 1 over the deletion budget, 1 not affected',
      });
      assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN), 'the token is printed');
    });
  }

  test('--post: a refusal by the host is an error that names the status, never the token', async (t) => {
    const sink = await startSink(t, () => 403);
    const r = await plan('--post', 'gitea', '--pr', '3', '--repo-url', `${sink.url}/acme/platform`);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /posting the plan to gitea pull request #3 on 127\.0\.0\.1:\d+ failed: the provider answered HTTP 403/,
    );
    const [req] = (await sink.received(1)) as [Recorded];
    assert.equal(req.url, '/api/v1/repos/acme/platform/issues/3/comments');
    assert.equal(req.headers.authorization, `token ${TOKEN}`);
    assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN), 'the token is printed');
    const missing = await mooring(
      ['plan', '--repo', repo.dir, '--base', 'main', '--post', 'github', '--pr', '3'],
      {
        env: { MOORING_GIT_TOKEN: '' },
      },
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /needs a token in \$MOORING_GIT_TOKEN/);
  });
});
