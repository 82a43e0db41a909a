import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createLogger, KubeClient, type KubeObject, type Logger, objectLogger } from '@mooring/runtime';
import { eventually } from '@mooring/test/harness';
import { type ControlPlaneLocation, down, locationAt, up } from '../../hack/lib/control-plane.ts';
import { CLI_MAIN, mooring } from './run-cli.ts';

const NS = 'mooring-system';
const HOUR_MS = 3_600_000;

/** A container log file as kubelet (here kwok) keeps it: one CRI line per line written. */
class CriLogFile {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
    writeFileSync(path, '');
  }
  append(line: string, at = new Date()): void {
    appendFileSync(this.path, `${at.toISOString()} stdout F ${line}\n`);
  }
}

/** The real operator logger, writing each JSON line into `file` with the CRI time `at()`. */
function loggerInto(file: CriLogFile, name: string, at: () => Date = () => new Date()): Logger {
  return createLogger({
    level: 'debug',
    name,
    destination: { write: (chunk: string) => file.append(chunk.trimEnd(), at()) },
  });
}

const ks = (namespace: string, name: string) => ({ kind: 'Kustomization', metadata: { namespace, name } });

interface PodView extends KubeObject {
  status?: { phase?: string };
}

// A plane of its own with workloads: `mooring install` rolls the operator Deployments out as kwok
// pods, kwok serves each pod's log from a file this test writes, and the CLI reads it the way it
// would in a real cluster: pods/log through the API server, which asks the (kwok) kubelet.
describe('mooring logs reads the operator pods through the API server and filters by object', () => {
  let dir: string;
  let loc: ControlPlaneLocation;
  let client: KubeClient;
  let env: Record<string, string>;
  let kustomize: Logger;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mooring-logs-plane-'));
    loc = locationAt(dir);
    const plane = await up(loc, () => {}, { workloads: true });
    client = await KubeClient.fromKubeconfig(plane.kubeconfig);
    env = { KUBECONFIG: plane.kubeconfig };

    const installed = await mooring(['install'], { env });
    assert.equal(installed.code, 0, installed.stderr);
    const pods = await eventually(
      'the four operator pods Running',
      async () => {
        const list = await client.list<PodView>('v1', 'Pod', {
          namespace: NS,
          labelSelector: 'app.kubernetes.io/component=operator',
        });
        return list.items.length === 4 && list.items.every((p) => p.status?.phase === 'Running')
          ? list.items
          : undefined;
      },
      120_000,
    );

    // Each pod's container log is a file of its own; the kustomize and source ones get lines.
    const files = new Map<string, CriLogFile>();
    for (const pod of pods) {
      const operator = pod.metadata.labels?.['app.kubernetes.io/name'] ?? '';
      const file = new CriLogFile(join(dir, `${operator}.log`));
      files.set(operator, file);
      await client.create({
        apiVersion: 'kwok.x-k8s.io/v1alpha1',
        kind: 'Logs',
        metadata: { name: pod.metadata.name, namespace: NS },
        spec: { logs: [{ containers: ['manager'], logsFile: file.path, follow: true }] },
      });
    }
    const kustomizeLog = files.get('kustomize')!;
    const twoHoursAgo = new Date(Date.now() - 2 * HOUR_MS);
    loggerInto(kustomizeLog, 'kustomize', () => twoHoursAgo).info({}, 'starting operator');
    kustomizeLog.append('(node:1) Warning: a line that is not JSON');
    kustomize = loggerInto(kustomizeLog, 'kustomize');
    const apps = objectLogger(kustomize, ks('team-a', 'apps'));
    apps.info({ revision: 'main@sha1:1111' }, 'applied revision main@sha1:1111');
    objectLogger(kustomize, ks('team-a', 'infra')).debug({}, 'building ./infra');
    apps.error({ err: 'kustomization path ./missing not found' }, 'reconcile failed');
    objectLogger(kustomize, ks('team-b', 'apps')).info({}, 'applied revision main@sha1:2222');
    apps.info({ token: 'hunter2-secret' }, 'fetched artifact');
    const source = loggerInto(files.get('source')!, 'source');
    objectLogger(source, { kind: 'GitRepository', metadata: { namespace: 'team-a', name: 'fleet' } }).info(
      {},
      'stored artifact main@sha1:1111',
    );

    // kwok picks the Logs up through a watch: wait until the API server serves the file.
    const kustomizePod = pods.find((p) => p.metadata.labels?.['app.kubernetes.io/name'] === 'kustomize')!;
    await eventually(
      "kwok serving the kustomize pod's log",
      async () => {
        for await (const line of client.streamLines(
          `/api/v1/namespaces/${NS}/pods/${kustomizePod.metadata.name}/log`,
          { container: 'manager' },
        ))
          if (line.includes('fetched artifact')) return true;
        return false;
      },
      30_000,
    );
  });

  after(async () => {
    client?.close();
    if (loc) await down(loc);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('--kind and --name show only that object in -n, one readable line per record', async () => {
    // Each run is a process of its own; running them together keeps the test short.
    const [r, all] = await Promise.all([
      mooring(['logs', '--kind', 'Kustomization', '--name', 'apps', '-n', 'team-a'], { env }),
      mooring(['logs', '--kind', 'ks', '--name', 'apps', '-A'], { env }),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3, r.stdout);
    const time = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
    assert.match(
      lines[0]!,
      new RegExp(`^${time} info kustomize Kustomization/team-a/apps applied revision main@sha1:1111$`),
    );
    assert.match(
      lines[1]!,
      new RegExp(
        `^${time} error kustomize Kustomization/team-a/apps reconcile failed: kustomization path ./missing not found$`,
      ),
    );
    assert.match(
      lines[2]!,
      new RegExp(`^${time} info kustomize Kustomization/team-a/apps fetched artifact$`),
    );
    assert.ok(!r.stdout.includes('hunter2'), 'a field the logger redacts never reaches the output');

    // A kind's short name works as in `get`; across namespaces both `apps` show.
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout.trimEnd().split('\n').length, 4, all.stdout);
    assert.match(all.stdout, / Kustomization\/team-b\/apps applied revision main@sha1:2222$/m);
  });

  test('--level error shows only errors; -n without -A hides other namespaces, operator lines and non-JSON', async () => {
    const [errors, teamA, everything, filtered, bad] = await Promise.all([
      mooring(['logs', '--level', 'error', '-A'], { env }),
      mooring(['logs', '-n', 'team-a'], { env }),
      mooring(['logs', '-A'], { env }),
      mooring(['logs', '-A', '--kind', 'Kustomization'], { env }),
      mooring(['logs', '--level', 'loud'], { env }),
    ]);
    assert.equal(errors.code, 0, errors.stderr);
    assert.deepEqual(
      errors.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(' ').slice(1).join(' ')),
      ['error kustomize Kustomization/team-a/apps reconcile failed: kustomization path ./missing not found'],
    );

    assert.equal(teamA.code, 0, teamA.stderr);
    assert.equal(teamA.stdout.trimEnd().split('\n').length, 5, teamA.stdout);
    assert.match(teamA.stdout, / source GitRepository\/team-a\/fleet stored artifact main@sha1:1111$/m);
    assert.match(teamA.stdout, / debug kustomize Kustomization\/team-a\/infra building \.\/infra$/m);
    for (const hidden of ['team-b', 'starting operator', 'not JSON'])
      assert.ok(!teamA.stdout.includes(hidden), `${hidden} is hidden without -A`);

    assert.equal(everything.code, 0, everything.stderr);
    assert.match(everything.stdout, / info kustomize - starting operator$/m);
    assert.match(everything.stdout, /^\(node:1\) Warning: a line that is not JSON$/m);
    assert.match(everything.stdout, /Kustomization\/team-b\/apps/);
    // A filter drops what is not a record.
    assert.ok(!filtered.stdout.includes('not JSON'), filtered.stdout);

    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--level 'loud' is not a level: use one of debug, info, warn, error\./);
  });

  test('--tail takes the last lines of each pod, --since drops older ones', async () => {
    const [tail, recent] = await Promise.all([
      mooring(['logs', '-A', '--tail', '2'], { env }),
      mooring(['logs', '-A', '--since', '1h'], { env }),
    ]);
    assert.equal(tail.code, 0, tail.stderr);
    // kustomize's last two lines, then source's one; pods are read in operator order.
    assert.deepEqual(
      tail.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(' ').slice(2).join(' ')),
      [
        'kustomize Kustomization/team-b/apps applied revision main@sha1:2222',
        'kustomize Kustomization/team-a/apps fetched artifact',
        'source GitRepository/team-a/fleet stored artifact main@sha1:1111',
      ],
    );

    assert.equal(recent.code, 0, recent.stderr);
    assert.ok(!recent.stdout.includes('starting operator'), recent.stdout);
    assert.match(recent.stdout, /Kustomization\/team-a\/infra building/);
  });

  test('--follow streams lines appended afterwards until interrupted', async (t) => {
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'logs', '-f', '--kind', 'Kustomization', '--name', 'infra', '-n', 'team-a'],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    t.after(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await eventually('the existing infra line', async () => stdout.includes('building ./infra'), 60_000);

    const infra = objectLogger(kustomize, ks('team-a', 'infra'));
    objectLogger(kustomize, ks('team-a', 'apps')).info({}, 'applied revision main@sha1:3333');
    infra.info({}, 'applied revision main@sha1:3333');
    await eventually(
      'the appended infra line',
      async () => /Kustomization\/team-a\/infra applied revision main@sha1:3333$/m.test(stdout),
      30_000,
    );
    assert.ok(!stdout.includes('Kustomization/team-a/apps'), stdout);
    assert.match(stderr, /^◎ following 4 operator container\(s\); Ctrl-C stops$/m);

    child.kill('SIGINT');
    assert.equal(await exited, 0, stderr);
  });
});
