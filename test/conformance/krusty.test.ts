// Mooring's engine on kustomize's own krusty test cases (api/krusty/*_test.go at kustomize v5.8.0,
// dumped by hack/gen-krusty-cases.ts into krusty/cases/). Every scored case is built twice: with
// the case's options (the harness default is input order, `sortOptions: {order: fifo}` here) and
// with the CLI's default order (legacy), and compared with kustomize's result. A failure must be
// listed in krusty/known-gaps.json with its category; a listed case that passes fails too, so the
// list stays true (`node --import tsx hack/krusty-report.ts --write` rewrites it). The cases that
// inflate a Helm chart are in krusty-helm.test.ts: they run the wasm renderer, an integration test.
import { test } from 'node:test';
import { readIndex, readKnownGaps, scoredCases } from './krusty-cases.ts';
import { scoreCases } from './krusty-score.ts';

const gaps = readKnownGaps();
const cases = scoredCases();

test('the krusty corpus is there and known-gaps.json names only scored cases', () => {
  const all = readIndex().cases;
  if (all.length < 300)
    throw new Error(`only ${all.length} krusty cases; regenerate with hack/gen-krusty-cases.ts`);
  const keys = new Set(cases.flatMap((c) => [c.id, `${c.id}#cli`]));
  const unknown = Object.keys(gaps).filter((k) => !keys.has(k));
  if (unknown.length > 0)
    throw new Error(`known-gaps.json lists cases that are not scored: ${unknown.slice(0, 10).join(', ')}`);
});

scoreCases(
  cases.filter((c) => !c.options.plugins.helmEnabled),
  gaps,
);
