import type {
  GitRepository,
  HelmChart,
  HelmRelease,
  HelmRepository,
  Kustomization,
  OCIRepository,
} from '@mooring/api';
import type { StatusResult } from '@mooring/kstatus';
import type { KubeObject } from '@mooring/runtime';
import { readyCondition, withSourceReason } from './object-status.ts';
import type { OwnerLink, SourceLink, TraceStep } from './trace-chain.ts';

/** What `trace` prints, and the first thing that breaks the chain (the reason to exit 1). */
export interface TraceReport {
  text: string;
  problem?: string;
}

type Field = [label: string, value: string];

// The longest label, `Kustomization:`, and a space.
const LABEL_WIDTH = 'Kustomization:  '.length;

/** Credentials in a URL (`https://user:token@host`) must never be printed. */
function withoutUserinfo(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/g, '//');
}

function block(fields: Field[]): string {
  return fields
    .filter(([, value]) => value !== '')
    .map(
      ([label, value]) => `${`${label}:`.padEnd(LABEL_WIDTH)}${withoutUserinfo(value).replace(/\s+/g, ' ')}`,
    )
    .join('\n');
}

const ref = (kind: string, namespace: string | undefined, name: string): string =>
  `${kind} ${namespace ? `${namespace}/` : ''}${name}`;

const refOf = (obj: KubeObject): string => ref(obj.kind, obj.metadata.namespace, obj.metadata.name ?? '');

/** `True - message` from the Ready condition, and since when it has held; `explain` rewords the message. */
function readyFields(obj: KubeObject, explain: (message: string) => string = (m) => m): Field[] {
  const ready = readyCondition(obj);
  const suspended = (obj.spec as { suspend?: boolean } | undefined)?.suspend === true;
  const lastTransition = (ready as { lastTransitionTime?: string } | undefined)?.lastTransitionTime;
  return [
    [
      'Ready',
      ready
        ? `${ready.status}${ready.message ? ` - ${explain(ready.message)}` : ''}`
        : 'Unknown - not reconciled yet',
    ],
    ['Since', lastTransition ?? ''],
    ['Suspended', suspended ? 'True' : ''],
  ];
}

function managedBy(owner: OwnerLink | undefined): Field[] {
  if (!owner) return [];
  const who = ref(owner.kind, owner.namespace, owner.name);
  if (!owner.applier) return [['Managed by', `${who}, which does not exist`]];
  if (owner.hook) return [['Managed by', `${who}, as its ${owner.hook} hook`]];
  if (!owner.listed) return [['Managed by', `${who} by its labels only: not in its inventory`]];
  return [['Managed by', who]];
}

function objectBlock(step: TraceStep, status: StatusResult): string {
  const { object } = step;
  return block([
    ['Object', `${object.kind}/${object.metadata.name ?? ''}`],
    ['Namespace', object.metadata.namespace ?? ''],
    ['API version', object.apiVersion],
    ['Status', `${status.status}${status.message ? ` - ${status.message}` : ''}`],
    ...managedBy(step.owner),
  ]);
}

function kustomizationBlock(
  owner: OwnerLink,
  source: SourceLink | undefined,
  up: TraceStep | undefined,
): string {
  const ks = owner.applier as Kustomization & KubeObject;
  const attempted = ks.status?.lastAttemptedRevision;
  const applied = ks.status?.lastAppliedRevision;
  return block([
    ['Kustomization', owner.name],
    ['Namespace', owner.namespace],
    ['Path', ks.spec.path ?? './'],
    ['Revision', applied ?? 'nothing applied yet'],
    ['Attempted', attempted && attempted !== applied ? attempted : ''],
    // "has no artifact yet" with the reason the source gives.
    ...readyFields(ks, (message) => (source ? withSourceReason(message, source.source) : message)),
    ['Source', source ? ref(source.kind, source.namespace, source.name) : ''],
    ...managedBy(up?.owner),
  ]);
}

/** The release's chart and Helm revision: the newest deployed one, and the newest attempt when it differs. */
function helmReleaseBlock(
  owner: OwnerLink,
  source: SourceLink | undefined,
  up: TraceStep | undefined,
): string {
  const hr = owner.applier as HelmRelease & KubeObject;
  const history = hr.status?.history ?? [];
  const deployed = history.find((r) => r.status === 'deployed');
  const latest = history[0];
  const attempted = hr.status?.lastAttemptedRevision;
  return block([
    ['HelmRelease', owner.name],
    ['Namespace', owner.namespace],
    ['Chart', deployed ? `${deployed.chartName}@${deployed.chartVersion}` : 'nothing deployed yet'],
    ['Release', latest ? `${latest.namespace}/${latest.name} v${latest.version} ${latest.status}` : ''],
    ['Attempted', attempted && attempted !== deployed?.chartVersion ? attempted : ''],
    ...readyFields(hr, (message) => (source ? withSourceReason(message, source.source) : message)),
    ['Source', source ? ref(source.kind, source.namespace, source.name) : ''],
    ...managedBy(up?.owner),
  ]);
}

/** The reference a Git source follows, by the source operator's precedence: commit > name > semver > tag > branch. */
function gitRefField(spec: GitRepository['spec']): Field {
  const r = spec.ref ?? {};
  if (r.commit) return ['Commit', r.commit];
  if (r.name) return ['Ref', r.name];
  if (r.semver) return ['Semver', r.semver];
  if (r.tag) return ['Tag', r.tag];
  return ['Branch', r.branch ?? 'master'];
}

/** What an OCI source pulls, by precedence digest > semver > tag. */
function ociRefField(spec: OCIRepository['spec']): Field {
  const r = spec.ref ?? {};
  if (r.digest) return ['Digest', r.digest];
  if (r.semver) return ['Semver', r.semver];
  return ['Tag', r.tag ?? 'latest'];
}

function sourceBlock(link: SourceLink): string {
  const head: Field[] = [
    [link.kind, link.name],
    ['Namespace', link.namespace],
  ];
  const { source } = link;
  if (!source) return block([...head, ['Status', 'not found']]);
  const artifact = (source.status as { artifact?: { revision?: string } } | undefined)?.artifact;
  const revision: Field = ['Revision', artifact?.revision ?? 'no artifact yet'];
  if (source.kind === 'HelmChart') {
    const spec = source.spec as HelmChart['spec'];
    return block([
      ...head,
      ['Chart', spec.chart],
      ['Version', spec.version ?? '*'],
      revision,
      ...readyFields(source),
      ['Source', ref(spec.sourceRef.kind, link.namespace, spec.sourceRef.name)],
    ]);
  }
  if (source.kind === 'HelmRepository') {
    const spec = source.spec as HelmRepository['spec'];
    // An OCI chart repository has no index, so no artifact (as in Flux).
    const oci = spec.type === 'oci' && !artifact;
    return block([...head, ['URL', spec.url], oci ? ['Type', 'oci'] : revision, ...readyFields(source)]);
  }
  const spec = source.spec as GitRepository['spec'] & OCIRepository['spec'];
  return block([
    ...head,
    ['URL', spec.url],
    source.kind === 'OCIRepository' ? ociRefField(spec) : gitRefField(spec),
    revision,
    ...readyFields(source),
  ]);
}

/** The sentence that explains why `step` breaks the chain, if it does. */
function problemOf(step: TraceStep): string | undefined {
  const { owner, source, chartSource } = step;
  if (!owner) return undefined;
  const who = refOf(step.object);
  const applier = ref(owner.kind, owner.namespace, owner.name);
  const labels = owner.kind === 'Kustomization' ? 'kustomize.mooring.dev' : 'helm.mooring.dev';
  if (!owner.applier)
    return `${who} is labelled as applied by ${applier}, which does not exist: it was deleted without pruning, or it applies from another cluster through spec.kubeConfig.`;
  if (!owner.listed && !owner.hook)
    return `${who} carries the labels of ${applier} but is not in its inventory, so Mooring does not manage it: it was created or copied by hand; add it to Git or remove its ${labels} labels.`;
  if (source && !source.source) {
    const missing = ref(source.kind, source.namespace, source.name);
    if (owner.kind === 'Kustomization')
      return `${applier} reads from ${missing}, which does not exist: create it, e.g. with 'mooring create source git'.`;
    return (owner.applier as HelmRelease).spec.chart
      ? `${applier} reads its chart from ${missing}, which the kustomize operator creates from spec.chart and has not: is it running? Check with 'mooring check'.`
      : `${applier} reads its chart from ${missing} (spec.chartRef), which does not exist: create it, e.g. with 'mooring create source chart'.`;
  }
  if (source && chartSource && !chartSource.source)
    return `${ref(source.kind, source.namespace, source.name)} packages its chart from ${ref(chartSource.kind, chartSource.namespace, chartSource.name)}, which does not exist: create it, e.g. with 'mooring create source helm' or 'mooring create source git'.`;
  return undefined;
}

/**
 * Blocks separated by `---`: the object, then for each level its Kustomization or HelmRelease and
 * what it reads from (a HelmRelease's chart, then the chart's own source); a source shared by
 * several levels is printed once.
 */
export function formatTrace(steps: readonly TraceStep[], status: StatusResult): TraceReport {
  const first = steps[0];
  if (!first) return { text: '' };
  const blocks = [objectBlock(first, status)];
  const printedSources = new Set<string>();
  let problem: string | undefined;
  for (const [i, step] of steps.entries()) {
    problem ??= problemOf(step);
    const { owner, source, chartSource } = step;
    if (!owner?.applier) continue;
    blocks.push(
      owner.kind === 'Kustomization'
        ? kustomizationBlock(owner, source, steps[i + 1])
        : helmReleaseBlock(owner, source, steps[i + 1]),
    );
    for (const link of [source, chartSource]) {
      if (!link) continue;
      const key = ref(link.kind, link.namespace, link.name);
      if (printedSources.has(key)) continue;
      printedSources.add(key);
      blocks.push(sourceBlock(link));
    }
  }
  return { text: `${blocks.join('\n---\n')}\n`, problem };
}
