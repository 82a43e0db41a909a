// The renderer's Helm is Helm v3.22.0 with two hot paths written by hand (hack/tools/helm-renderer/
// helm-overlay): the manifest splitter and the toYaml/fromYaml template functions. Their Go tests
// compare each with the Helm code it replaces, on edge cases and random inputs; fidelity.test.ts
// compares whole renders with bin/helm.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { goTestHelmOverlays } from './helm-oracle.ts';

it("the renderer's hand-written splitter, toYaml and fromYaml give what Helm's own code gives", {
  timeout: 600_000,
}, async () => {
  const run = await goTestHelmOverlays();
  assert.equal(run.code, 0, `go test failed:\n${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /^ok\s.*helm-overlay\/engine/m);
  assert.match(run.stdout, /^ok\s.*helm-overlay\/releaseutil/m);
});
