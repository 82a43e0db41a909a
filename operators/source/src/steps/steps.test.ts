// The shared source steps over a real ArtifactStorage in a temporary folder and a recording
// context (no cluster), and the step lists against docs/architecture.md's table.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Artifact } from '@mooring/api';
import { ArtifactStorage } from '@mooring/artifact';
import { type MooringStatus, type ReconcileContext, setCondition, step } from '@mooring/runtime';
import { stepContext } from '@mooring/test/harness/step-context';
import type { SourceRun } from '../source-run.ts';
import {
  buildStep,
  keepCurrentArtifact,
  reconcileSource,
  recordArtifact,
  verifyStorage,
} from './artifact.ts';
import { GIT_REPOSITORY_STEPS } from './git-repository/index.ts';
import { HELM_CHART_STEPS } from './helm-chart/index.ts';
import { HELM_REPOSITORY_STEPS } from './helm-repository/index.ts';
import { OCI_REPOSITORY_STEPS } from './oci-repository/index.ts';

const REF = { kind: 'GitRepository', namespace: 'team', name: 'app' };
function recordingContext() {
  const status: MooringStatus & { artifact?: Artifact; observedIgnore?: string } = {};
  const { ctx, events } = stepContext(status, () => 0);
  const condition = (type: string) => status.conditions?.find((c) => c.type === type);
  return { ctx, status, events, condition };
}

async function withStorage(fn: (storage: ArtifactStorage, tree: string, root: string) => Promise<void>) {
  const root = await mkdtemp(join(tmpdir(), 'mooring-steps-'));
  try {
    const tree = join(root, 'tree');
    await mkdir(tree);
    await writeFile(join(tree, 'a.yaml'), 'a: 1\n');
    const storage = new ArtifactStorage({ root: join(root, 'store'), advertisedBase: 'http://old:9090' });
    await fn(storage, tree, root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

type TestStatus = { artifact?: Artifact; observedIgnore?: string };

function runOf(storage: ArtifactStorage, ctx: ReconcileContext, revision: string): SourceRun<TestStatus> {
  return {
    ctx,
    status: ctx.status as TestStatus,
    storage,
    storageRef: REF,
    timeoutMs: 1000,
    revision,
  };
}

test('an up-to-date artifact is kept, its URL re-advertised, and the build steps are skipped', async () => {
  await withStorage(async (storage, tree, root) => {
    const stored = await storage.archive(REF, tree);
    const moved = new ArtifactStorage({ root: join(root, 'store'), advertisedBase: 'http://new:9090' });
    const { ctx, status, condition } = recordingContext();
    status.artifact = { ...stored, revision: 'main@sha1:1' };
    const built: string[] = [];
    const run = runOf(moved, ctx, 'main@sha1:1');
    const result = await reconcileSource(
      [
        step('verify storage', verifyStorage),
        step(
          'keep current artifact',
          keepCurrentArtifact(() => true),
        ),
        buildStep('build', () => {
          built.push('build');
          return undefined;
        }),
      ],
      run,
    );
    assert.deepEqual(built, []);
    assert.equal(run.upToDate, true);
    assert.equal(result.announced, undefined, 'no new artifact, no NewArtifact: Ready changes are announced');
    assert.equal(status.artifact?.url, `http://new:9090/${stored.path}`);
    assert.equal(condition('ArtifactInStorage')?.status, 'True');
  });
});

test('a new revision or changed inputs build: ArtifactOutdated until the shared tail records the artifact', async () => {
  await withStorage(async (storage, tree) => {
    const first = await storage.archive(REF, tree);
    for (const [revision, same] of [
      ['main@sha1:2', true],
      ['main@sha1:1', false],
    ] as const) {
      const { ctx, status, events, condition } = recordingContext();
      status.artifact = { ...first, revision: 'main@sha1:1' };
      status.conditions = setCondition(
        status.conditions,
        { type: 'StorageOperationFailed', status: 'True', reason: 'ArchiveOperationFailed', message: 'x' },
        new Date(0),
      );
      const run = runOf(storage, ctx, revision);
      let outdated: string | undefined;
      const result = await reconcileSource<SourceRun<TestStatus>>(
        [
          step(
            'keep current artifact',
            keepCurrentArtifact(() => same),
          ),
          buildStep('pack artifact', async (r) => {
            outdated = condition('ArtifactOutdated')?.status;
            await writeFile(join(tree, 'b.yaml'), `revision: ${revision}\n`);
            const stored = await storage.archive(REF, tree);
            r.packed = {
              artifact: { ...stored, revision },
              observed: { observedIgnore: '*.md' },
              event: 'new',
            };
            return undefined;
          }),
          buildStep('record artifact', recordArtifact),
        ],
        run,
      );
      assert.equal(outdated, 'True', revision);
      // Its NewArtifact event tells of it: the Ready event is not sent as well (as Flux).
      assert.deepEqual(result, {
        message: `stored artifact for revision '${revision}'`,
        revision,
        announced: true,
      });
      assert.equal(status.artifact?.revision, revision);
      assert.equal(status.observedIgnore, '*.md');
      assert.equal(condition('ArtifactOutdated'), undefined);
      assert.equal(condition('StorageOperationFailed'), undefined);
      assert.equal(condition('ArtifactInStorage')?.status, 'True');
      assert.deepEqual(
        events.map((e) => [e.reason, e.message, e.metadata?.revision]),
        [['NewArtifact', 'new', revision]],
      );
    }
  });
});

test('an artifact gone from storage is dropped, to be rebuilt', async () => {
  await withStorage(async (storage, tree, root) => {
    const stored = await storage.archive(REF, tree);
    await rm(join(root, 'store', stored.path));
    const { ctx, status, condition } = recordingContext();
    status.artifact = { ...stored, revision: 'main@sha1:1' };
    await verifyStorage(runOf(storage, ctx, 'main@sha1:1'));
    assert.equal(status.artifact, undefined);
    assert.equal(condition('ArtifactInStorage')?.status, 'False');
  });
});

test('the scratch folder is removed when a step fails', async () => {
  await withStorage(async (storage, _tree, root) => {
    const { ctx } = recordingContext();
    const run = runOf(storage, ctx, 'main@sha1:1');
    const scratch = join(root, 'scratch');
    await assert.rejects(
      reconcileSource(
        [
          step<SourceRun>('check out', async (r) => {
            await mkdir(scratch);
            r.scratch = scratch;
            throw new Error('fetch failed');
          }),
        ],
        run,
      ),
      /fetch failed/,
    );
    assert.equal(existsSync(scratch), false);
  });
});

test("docs/architecture.md's step table names each kind's steps, in order", () => {
  const doc = readFileSync(
    fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url)),
    'utf8',
  );
  const row = (kind: string) => {
    const line = doc.split('\n').find((l) => l.startsWith(`| ${kind} |`));
    assert.ok(line, `no row for ${kind}`);
    const steps = line.split('|')[2]!.replace(/\([^)]*\)/g, '');
    return steps.split('→').map((s) => s.trim());
  };
  assert.deepEqual(
    row('GitRepository'),
    GIT_REPOSITORY_STEPS.map((s) => s.name),
  );
  assert.deepEqual(
    row('OCIRepository'),
    OCI_REPOSITORY_STEPS.map((s) => s.name),
  );
  assert.deepEqual(
    row('HelmRepository'),
    HELM_REPOSITORY_STEPS.map((s) => s.name),
  );
  assert.deepEqual(
    row('HelmChart'),
    HELM_CHART_STEPS.map((s) => s.name),
  );
});
