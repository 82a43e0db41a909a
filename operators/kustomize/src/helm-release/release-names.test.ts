import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HelmRelease } from '@mooring/api';
import { helmChartNameOf, placementOf } from './release-names.ts';

const hr = (spec: Partial<HelmRelease['spec']>): HelmRelease =>
  ({
    apiVersion: 'helm.mooring.dev/v2',
    kind: 'HelmRelease',
    metadata: { name: 'podinfo', namespace: 'apps' },
    spec: { interval: '5m', chartRef: { kind: 'HelmChart', name: 'c' }, ...spec },
  }) as HelmRelease;

test('release name and namespaces as Flux derives them', () => {
  const cases: [string, Partial<HelmRelease['spec']>, ReturnType<typeof placementOf>][] = [
    ['defaults', {}, { releaseName: 'podinfo', targetNamespace: 'apps', storageNamespace: 'apps' }],
    [
      'targetNamespace prefixes the name and stores there',
      { targetNamespace: 'web' },
      { releaseName: 'web-podinfo', targetNamespace: 'web', storageNamespace: 'web' },
    ],
    [
      'releaseName and storageNamespace win',
      { targetNamespace: 'web', releaseName: 'pi', storageNamespace: 'helm' },
      { releaseName: 'pi', targetNamespace: 'web', storageNamespace: 'helm' },
    ],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(placementOf(hr(spec)), want, what);
});

test("the HelmChart for spec.chart is <namespace>-<name> in the source's namespace", () => {
  const chart = (namespace?: string) =>
    hr({
      chartRef: undefined,
      chart: {
        spec: {
          chart: 'podinfo',
          sourceRef: { kind: 'HelmRepository', name: 'repo', ...(namespace ? { namespace } : {}) },
        },
      },
    });
  assert.deepEqual(helmChartNameOf(chart()), { namespace: 'apps', name: 'apps-podinfo' });
  assert.deepEqual(helmChartNameOf(chart('flux-system')), { namespace: 'flux-system', name: 'apps-podinfo' });
  assert.equal(helmChartNameOf(hr({})), undefined);
});
