// kustomize's own krusty cases that inflate a Helm chart (helmCharts:, --enable-helm), built by
// Mooring with the sandboxed renderer (bin/mooring-helm.wasm) and scored as krusty.test.ts scores
// the rest. The renderer makes this an integration test: npm test runs it, test:unit does not.
import { requireHelmBinaries } from '../../shared/helm/test/helm-oracle.ts';
import { readKnownGaps, scoredCases } from './krusty-cases.ts';
import { scoreCases } from './krusty-score.ts';

requireHelmBinaries();
scoreCases(
  scoredCases().filter((c) => c.options.plugins.helmEnabled),
  readKnownGaps(),
);
