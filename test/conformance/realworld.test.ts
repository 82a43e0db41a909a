// `mooring build` against the Go `kustomize build` (bin/kustomize, run live) on small trees vendored
// from public repositories (realworld/<repository>/..., each with its LICENSE and SOURCE). Every
// folder with a kustomization must give kustomize's bytes, or an error where kustomize errors. One
// that does not must be listed in realworld/known-gaps.md with the reason; a listed folder that
// matches fails too, so the list stays true. hack/realworld-report.ts runs the same comparison over
// whole repositories.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { readKnownGaps } from './known-gaps.ts';
import {
  KUSTOMIZE,
  kustomizationDirs,
  kustomizeBuild,
  mooringBuild,
  REALWORLD_DIR,
  shortDiff,
  verdictOf,
} from './realworld.ts';

const gaps = readKnownGaps(join(REALWORLD_DIR, 'known-gaps.md'));
const repos = readdirSync(REALWORLD_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const folders = repos.flatMap((repo) =>
  kustomizationDirs(join(REALWORLD_DIR, repo)).map((dir) => relative(REALWORLD_DIR, dir)),
);

test('the vendored trees are there, each repository with its LICENSE and SOURCE', () => {
  if (!existsSync(KUSTOMIZE))
    throw new Error('bin/kustomize is missing: run `bash hack/build-tools.sh kustomize`.');
  if (folders.length < 20) throw new Error(`only ${folders.length} vendored kustomization folders`);
  for (const repo of repos)
    for (const file of ['LICENSE', 'SOURCE'])
      if (!existsSync(join(REALWORLD_DIR, repo, file))) throw new Error(`realworld/${repo} has no ${file}`);
  const unknown = [...gaps.keys()].filter((f) => !folders.includes(f));
  if (unknown.length > 0)
    throw new Error(`known-gaps.md lists folders that are not vendored: ${unknown.join(', ')}`);
});

for (const folder of folders) {
  test(`real-world tree ${folder}`, async (t) => {
    const dir = join(REALWORLD_DIR, folder);
    const [go, mooring] = [await kustomizeBuild(dir), await mooringBuild(dir)];
    const verdict = verdictOf(go, mooring);
    const matches = verdict === 'identical' || verdict === 'both-error';
    const gap = gaps.get(folder);
    if (matches) {
      if (gap !== undefined) throw new Error(`${folder} matches kustomize now: remove it from known-gaps.md`);
      return;
    }
    let why: string = verdict;
    if (go.ok && mooring.ok) why = `different output:\n${shortDiff(go.output, mooring.output)}`;
    else if (go.ok && !mooring.ok) why = `kustomize builds it, Mooring refuses: ${mooring.error}`;
    else if (!go.ok && mooring.ok)
      why = `kustomize refuses it (${go.error.split('\n')[0]}), Mooring builds it`;
    if (gap === undefined) throw new Error(`${folder}: ${why} (not in known-gaps.md)`);
    // A listed gap passes while it still fails, its failure in the report; fixed, it fails above.
    t.diagnostic(`known gap (${gap}): ${why}`);
  });
}
