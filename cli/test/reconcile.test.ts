import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceOperator } from '@mooring/source-operator';
import { GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

test('reconcile waits for the source operator and shows the revision; a failure exits 1; events shows them', async (t) => {
  const ns = await testNamespace(t, 'cli-reconcile');
  const { kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('app');
  const commit = await repo.commit({
    'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
  });
  await startGitOpsOperators(t, ns, { definitions: [sourceOperator()] });

  const created = await mooring(
    ['create', 'source', 'git', 'app', '--url', repo.url, '--interval', '1h', '-n', ns],
    { env },
  );
  assert.equal(created.code, 0, created.stderr);
  const ok = await mooring(['reconcile', 'source', 'git', 'app', '-n', ns, '--timeout', '60s'], { env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(
    ok.stdout,
    new RegExp(`^✔ GitRepository ${ns}/app reconciled at revision main@sha1:${commit}: `),
  );
  assert.match(ok.stderr, /► annotating GitRepository/);

  const broken = await mooring(
    ['create', 'source', 'git', 'gone', '--url', `${git.baseUrl}/missing.git`, '--interval', '1h', '-n', ns],
    { env },
  );
  assert.equal(broken.code, 0, broken.stderr);
  const failed = await mooring(['reconcile', 'gitrepository', 'gone', '-n', ns, '--timeout', '60s'], { env });
  assert.equal(failed.code, 1, failed.stderr);
  assert.equal(failed.stderr.includes('did not finish'), false, failed.stderr);
  assert.match(failed.stdout, new RegExp(`^✗ GitRepository ${ns}/gone is not ready: `));

  const [events, onlyApp] = await Promise.all([
    mooring(['events', '-n', ns], { env }),
    mooring(['events', '-n', ns, '--for', 'GitRepository/app'], { env }),
  ]);
  assert.equal(events.code, 0, events.stderr);
  assert.match(events.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
  assert.match(events.stdout, /GitRepository\/gone/);
  assert.match(onlyApp.stdout, /GitRepository\/app/);
  assert.doesNotMatch(onlyApp.stdout, /GitRepository\/gone/);

  // A suspended object is not waited on: the error says how to resume it.
  await mooring(['suspend', 'source', 'git', 'app', '-n', ns], { env });
  const suspended = await mooring(['reconcile', 'source', 'git', 'app', '-n', ns], { env });
  assert.equal(suspended.code, 1);
  assert.match(suspended.stderr, /is suspended: resume it with 'mooring resume gitrepository app -n /);
});
