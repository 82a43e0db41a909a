// `mooring create helmrelease`: Flux's `flux create helmrelease` flags, for helm.mooring.dev/v2.
import { readFileSync } from 'node:fs';
import { HELM_API_VERSION } from '@mooring/api';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { CliError, EXIT_ERROR } from '../cli-error.ts';
import { collect, creator, objectRef } from './create.ts';

const CHART_SOURCE_KINDS = ['HelmRepository', 'GitRepository', 'OCIRepository'];
const CHART_REF_KINDS = ['OCIRepository', 'HelmChart'];
const CRD_POLICIES = ['Skip', 'Create', 'CreateReplace'];

/** The kind of a `Kind/name` flag, spelled as the API has it, or a usage error naming the choices. */
function kindOf(value: string, allowed: string[], flag: string): string {
  const ref = objectRef(value, flag);
  const kind = allowed.find((k) => k.toLowerCase() === ref.kind.toLowerCase());
  if (!kind)
    throw new CliError(`${flag} kind '${ref.kind}' is not one of ${allowed.join(', ')}.`, EXIT_ERROR);
  return kind;
}

/** Deep merge of values files, later files winning, as `helm -f a -f b` merges them. */
function mergeValues(into: Record<string, unknown>, from: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(from)) {
    const cur = into[k];
    const bothMaps =
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      cur &&
      typeof cur === 'object' &&
      !Array.isArray(cur);
    into[k] = bothMaps
      ? mergeValues(cur as Record<string, unknown>, v as Record<string, unknown>)
      : structuredClone(v);
  }
  return into;
}

function readValuesFiles(files: string[] | undefined): Record<string, unknown> | undefined {
  if (!files?.length) return undefined;
  const values: Record<string, unknown> = {};
  for (const file of files) {
    let doc: unknown;
    try {
      doc = parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new CliError(`--values ${file}: ${(err as Error).message}`, EXIT_ERROR);
    }
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== 'object' || Array.isArray(doc))
      throw new CliError(`--values ${file} is not a map of values.`, EXIT_ERROR);
    mergeValues(values, doc as Record<string, unknown>);
  }
  return values;
}

export function registerHelmRelease(create: Command): void {
  creator(
    create,
    'helmrelease',
    'create or update a HelmRelease',
    (c) =>
      c
        .alias('hr')
        .option(
          '--source <Kind/[namespace/]name>',
          'chart source: HelmRepository, GitRepository or OCIRepository',
        )
        .option('--chart <name|path>', 'chart name (HelmRepository) or path in the source')
        .option('--chart-version <semver>', 'chart version or SemVer range (HelmRepository)')
        .option(
          '--chart-ref <Kind/[namespace/]name>',
          'an existing chart artifact: OCIRepository or HelmChart',
        )
        .option('--release-name <name>', 'Helm release name, [<target-namespace>-]<name> by default')
        .option('--target-namespace <ns>', "namespace of the release's objects")
        .option('--storage-namespace <ns>', 'namespace of the release records')
        .option('--create-target-namespace', 'create the target namespace if missing')
        .option(
          '--depends-on <[Kind/][ns/]name>',
          'HelmRelease or Kustomization that must be ready first (repeatable)',
          collect,
        )
        .option('--values <file>', 'local values file, merged into spec.values (repeatable)', collect)
        .option(
          '--values-from <Kind/name>',
          'ConfigMap/name or Secret/name with a values.yaml key (repeatable)',
          collect,
        )
        .option('--service-account <name>', 'ServiceAccount to impersonate')
        .option('--interval <duration>', 'how often to reconcile and correct drift', '10m')
        .option('--timeout <duration>', 'time an install or upgrade may take')
        .option('--reconcile-strategy <strategy>', "HelmChart's: ChartVersion or Revision")
        .option('--crds <policy>', 'CRDs on install and upgrade: Skip, Create or CreateReplace')
        .option('--kubeconfig-secret-ref <name>', 'Secret with a kubeconfig of the cluster to release to'),
    (f) => {
      if (!f.chartRef === !f.source)
        throw new CliError('give either --source with --chart, or --chart-ref.', EXIT_ERROR);
      let chart: Record<string, unknown> | undefined;
      let chartRef: Record<string, unknown> | undefined;
      if (f.chartRef) {
        const ref = objectRef(String(f.chartRef), '--chart-ref');
        chartRef = { ...ref, kind: kindOf(String(f.chartRef), CHART_REF_KINDS, '--chart-ref') };
      } else {
        if (!f.chart) throw new CliError('--source needs --chart: the chart name or its path.', EXIT_ERROR);
        const ref = objectRef(String(f.source), '--source');
        chart = {
          spec: {
            chart: f.chart,
            version: f.chartVersion,
            sourceRef: { ...ref, kind: kindOf(String(f.source), CHART_SOURCE_KINDS, '--source') },
            reconcileStrategy: f.reconcileStrategy,
          },
        };
      }
      const crds = f.crds === undefined ? undefined : String(f.crds);
      if (crds !== undefined && !CRD_POLICIES.includes(crds))
        throw new CliError(`--crds '${crds}' is not one of ${CRD_POLICIES.join(', ')}.`, EXIT_ERROR);
      const dependsOn = (f.dependsOn as string[] | undefined)?.map((d) => {
        const parts = d.split('/');
        const kind = ['HelmRelease', 'Kustomization'].find(
          (k) => k.toLowerCase() === parts[0]?.toLowerCase(),
        );
        const rest = kind ? parts.slice(1) : parts;
        if (rest.length < 1 || rest.length > 2 || rest.some((p) => !p))
          throw new CliError(`--depends-on '${d}' is not [Kind/][namespace/]name.`, EXIT_ERROR);
        const [a, b] = rest as [string, string | undefined];
        return { kind, ...(b === undefined ? { name: a } : { namespace: a, name: b }) };
      });
      const valuesFrom = (f.valuesFrom as string[] | undefined)?.map((v) => ({
        kind: kindOf(v, ['ConfigMap', 'Secret'], '--values-from'),
        name: objectRef(v, '--values-from').name,
      }));
      return {
        apiVersion: HELM_API_VERSION,
        kind: 'HelmRelease',
        spec: {
          chart,
          chartRef,
          interval: f.interval,
          timeout: f.timeout,
          releaseName: f.releaseName,
          targetNamespace: f.targetNamespace,
          storageNamespace: f.storageNamespace,
          dependsOn,
          serviceAccountName: f.serviceAccount,
          values: readValuesFiles(f.values as string[] | undefined),
          valuesFrom,
          install: { createNamespace: f.createTargetNamespace ? true : undefined, crds },
          upgrade: { crds },
          kubeConfig: f.kubeconfigSecretRef ? { secretRef: { name: f.kubeconfigSecretRef } } : undefined,
        },
      };
    },
  );
}
