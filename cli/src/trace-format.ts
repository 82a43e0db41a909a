import type { GitRepository, OCIRepository } from '@mooring/api';
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
  const who = ref('Kustomization', owner.namespace, owner.name);
  if (!owner.kustomization) return [['Managed by', `${who}, which does not exist`]];
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
  const ks = owner.kustomization!;
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
  const spec = source.spec as GitRepository['spec'] & OCIRepository['spec'];
  const artifact = (source.status as { artifact?: { revision?: string } } | undefined)?.artifact;
  return block([
    ...head,
    ['URL', spec.url],
    source.kind === 'OCIRepository' ? ociRefField(spec) : gitRefField(spec),
    ['Revision', artifact?.revision ?? 'no artifact yet'],
    ...readyFields(source),
  ]);
}

/** The sentence that explains why `step` breaks the chain, if it does. */
function problemOf(step: TraceStep): string | undefined {
  const { owner, source } = step;
  if (!owner) return undefined;
  const who = refOf(step.object);
  const ks = ref('Kustomization', owner.namespace, owner.name);
  if (!owner.kustomization)
    return `${who} is labelled as applied by ${ks}, which does not exist: it was deleted without pruning, or it applies from another cluster through spec.kubeConfig.`;
  if (!owner.listed)
    return `${who} carries the labels of ${ks} but is not in its inventory, so Mooring does not manage it: it was created or copied by hand; add it to Git or remove its kustomize.mooring.dev labels.`;
  if (source && !source.source)
    return `${ks} reads from ${ref(source.kind, source.namespace, source.name)}, which does not exist: create it, e.g. with 'mooring create source git'.`;
  return undefined;
}

/**
 * Blocks separated by `---`: the object, then for each level its Kustomization and that
 * Kustomization's source; a source shared by several levels is printed once.
 */
export function formatTrace(steps: readonly TraceStep[], status: StatusResult): TraceReport {
  const first = steps[0];
  if (!first) return { text: '' };
  const blocks = [objectBlock(first, status)];
  const printedSources = new Set<string>();
  let problem: string | undefined;
  for (const [i, step] of steps.entries()) {
    problem ??= problemOf(step);
    const { owner, source } = step;
    if (!owner?.kustomization) continue;
    blocks.push(kustomizationBlock(owner, source, steps[i + 1]));
    if (!source) continue;
    const key = ref(source.kind, source.namespace, source.name);
    if (printedSources.has(key)) continue;
    printedSources.add(key);
    blocks.push(sourceBlock(source));
  }
  return { text: `${blocks.join('\n---\n')}\n`, problem };
}
