import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';
import { need } from '../../source-run.ts';

/** The normalised index stored as the artifact: a tar.gz holding `index.yaml`. */
export async function packArtifact(run: HelmRepositoryRun): Promise<undefined> {
  const index = need(run.index, 'the index');
  run.scratch = await mkdtemp(join(tmpdir(), 'mooring-helmrepo-'));
  const tree = join(run.scratch, 'tree');
  await mkdir(tree);
  await writeFile(join(tree, 'index.yaml'), index.text);
  const stored = await run.storage.archive(run.storageRef, tree);
  const charts = Object.keys(index.index.entries).length;
  run.packed = {
    artifact: { ...stored, revision: index.revision },
    observed: {},
    event: `stored fetched index of ${charts} chart${charts === 1 ? '' : 's'} with revision '${index.revision}' from '${run.obj.spec.url}'`,
  };
  return undefined;
}

/** `status.url`: where the current index artifact is downloaded. */
export function advertiseUrl(run: HelmRepositoryRun): undefined {
  run.status.url = need(run.status.artifact, 'the artifact').url;
  return undefined;
}
