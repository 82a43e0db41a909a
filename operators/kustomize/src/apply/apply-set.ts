import { createHash } from 'node:crypto';
import { ApiError, FIELD_MANAGER, type Impersonation, type KubeClient } from '@mooring/runtime';
import type { ObjectRef } from '../inventory.ts';
import { wouldChange } from './compare.ts';
import { driftedFieldManagers, takeOverForeignFields } from './managed-fields.ts';
import type { ManagedVersions } from './managed-versions.ts';
import { type Manifest, objectPolicy } from './object-policy.ts';
import { settle, unsettle } from './settled.ts';
import { byStage } from './stages.ts';

export type ApplyAction = 'created' | 'configured' | 'unchanged' | 'skipped' | 'recreated';

export interface ApplyChange {
  ref: ObjectRef;
  action: ApplyAction;
  /** The object as the API server holds it after this pass (absent when skipped and missing). */
  live?: Manifest;
  /** For a live object this pass changed: the other field managers owning what differed (who drifted it). */
  changedBy?: string[];
}

export interface ApplySetOptions {
  client: KubeClient;
  /** The Kustomization's namespace, for namespaced objects that name none. */
  defaultNamespace: string;
  impersonate?: Impersonation;
  /** `spec.force`: recreate objects whose immutable fields changed. */
  force: boolean;
  concurrency: number;
  signal: AbortSignal;
  /**
   * Per object id, the resourceVersion seen right after we applied (or found equal) a payload, with
   * that payload's hash: the same payload on the same version means no drift and nothing to send.
   */
  knownVersions?: Map<string, KnownVersion>;
  /**
   * The managed objects' newest versions from a watch: an object whose version is still the one in
   * `knownVersions` is not read at all. Used only when its client is `client`.
   */
  versions?: ManagedVersions;
  /** Lets the caller adjust the payload against the live object (drift-ignore rules). */
  adjust?: (desired: Manifest, live: Manifest | undefined) => Manifest;
  /** Waits until the first stage's objects (CRDs, Namespaces) can be used. */
  waitForStage0?: (changes: ApplyChange[]) => Promise<void>;
  /**
   * Called once a stage has passed its dry run and before anything of it is written, with the
   * objects about to be applied: the caller records them (the inventory's intent) so that no
   * crash after this point can leave an object applied that no inventory lists.
   */
  beforeApply?: (refs: ObjectRef[]) => Promise<void>;
  /**
   * Whether an object may already exist (its owner's inventory lists it). One that may not is
   * dry-run first and read only if the dry run shows it exists: a first apply reads nothing.
   * Without it every object we know no version of is read alongside its dry run.
   */
  mayExist?: (ref: ObjectRef) => boolean;
}

/** What we last knew of an object: its version then, the payload that matched it, when we read it. */
export interface KnownVersion {
  version: string;
  payloadHash: string;
  /** When the object was last read or written as the tenant (not answered from the watch). */
  readAt: number;
}

/** The key of an object in `knownVersions`. */
export function knownVersionId(ref: { namespace?: string; name: string; kind: string }): string {
  return `${ref.namespace ?? ''}_${ref.name}_${ref.kind}`;
}

/**
 * A version answered from the operator's own watch is trusted for this long after the last read
 * as the tenant; then the object is read as the tenant again, so a revoked permission shows up on
 * the Kustomization within the hour instead of only at the next change.
 */
const READ_AS_TENANT_EVERY_MS = 60 * 60_000;

/** One object could not be applied; the message names it and carries the API server's reason. */
export class ApplyError extends Error {
  readonly ref: ObjectRef;
  constructor(ref: ObjectRef, message: string) {
    super(message);
    this.name = 'ApplyError';
    this.ref = ref;
  }
}

const describe = (r: ObjectRef) => `${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;

function isImmutableError(err: unknown): boolean {
  return err instanceof ApiError && err.isInvalid && /immutable/i.test(err.message);
}

/** Runs `work` over `items` with at most `limit` at a time, preserving result order. */
async function pool<I, O>(items: I[], limit: number, work: (item: I) => Promise<O>): Promise<O[]> {
  const out = new Array<O>(items.length);
  let next = 0;
  let stop = false;
  const run = async () => {
    while (next < items.length && !stop) {
      const i = next++;
      try {
        out[i] = await work(items[i]!);
      } catch (err) {
        stop = true; // no new work after a failure, as before
        throw err;
      }
    }
  };
  // Every worker finishes before the first failure is raised: a write still in flight must not
  // land after the reconcile has ended (and re-create what the next pass prunes).
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, run));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return out;
}

/**
 * Server-side applies `objects` as field manager `mooring`, in Flux's stages. Each stage is planned
 * whole before any of it is written: every object is read and dry-run (unless unchanged since our
 * last apply), so one invalid object fails the stage with nothing of it applied, as Flux's ApplyAll
 * does. Objects equal to their dry run are left alone; kubectl's edits are taken over; immutable-field
 * conflicts recreate the object when forced.
 */
export async function applySet(objects: Manifest[], opts: ApplySetOptions): Promise<ApplyChange[]> {
  const changes: ApplyChange[] = [];
  const stages = byStage(objects);
  for (const stage of stages) {
    if (stage.length === 0) continue;
    const plans = await pool(stage, opts.concurrency, (obj) => planOne(obj, opts));
    const writes = plans.filter((p) => p.write !== undefined);
    if (writes.length && opts.beforeApply) await opts.beforeApply(writes.map((p) => p.change.ref));
    const applied = await pool(plans, opts.concurrency, (plan) => execute(plan, opts));
    changes.push(...applied);
    // Discovery changes only when a CRD does. The mapper is the process's: dropping it after every
    // stage cost each Kustomization two discovery reads a pass, and its neighbours theirs.
    if (
      applied.some(
        (c) =>
          c.ref.kind === 'CustomResourceDefinition' && c.action !== 'unchanged' && c.action !== 'skipped',
      )
    )
      opts.client.mapper.invalidate();
    if (stage === stages[0] && opts.waitForStage0) await opts.waitForStage0(applied);
  }
  return changes;
}

type ObjectKey = { apiVersion: string; kind: string; namespace?: string; name: string };

/** What one object needs, decided before anything of its stage is written. */
interface Plan {
  /** The result when nothing is written; for a write, the ref and the live object before it. */
  change: ApplyChange;
  key: ObjectKey;
  id: string;
  payload: Manifest;
  payloadHash: string;
  write?: 'apply' | 'take-over' | 'recreate';
  takeOver?: unknown;
  changedBy?: string[];
}

async function refOf(obj: Manifest, opts: ApplySetOptions): Promise<{ ref: ObjectRef; obj: Manifest }> {
  const name = obj.metadata.name;
  const what = `${obj.kind} ${name ?? '(no name)'}`;
  if (!obj.apiVersion || !obj.kind || !name)
    throw new Error(`${what}: every object needs apiVersion, kind and metadata.name`);
  let namespaced: boolean;
  try {
    namespaced = (await opts.client.mapper.map(obj.apiVersion, obj.kind)).namespaced;
  } catch (err) {
    throw new ApplyError(
      { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace ?? '', name },
      `${what}: ${(err as Error).message}`,
    );
  }
  let namespace = '';
  if (namespaced) {
    namespace = obj.metadata.namespace || opts.defaultNamespace;
    if (namespace !== obj.metadata.namespace) obj = { ...obj, metadata: { ...obj.metadata, namespace } };
  } else if (obj.metadata.namespace) {
    const { namespace: _ignored, ...metadata } = obj.metadata;
    obj = { ...obj, metadata };
  }
  return { ref: { apiVersion: obj.apiVersion, kind: obj.kind, namespace, name }, obj };
}

function applyWith(opts: ApplySetOptions, o: Manifest, dryRun = false): Promise<Manifest> {
  return opts.client.apply(o as Manifest & { metadata: { name: string } }, {
    fieldManager: FIELD_MANAGER,
    force: true,
    dryRun,
    impersonate: opts.impersonate,
  }) as Promise<Manifest>;
}

/** Reads the object and dry-runs the payload: writes nothing, fails on what the server would refuse. */
async function planOne(input: Manifest, opts: ApplySetOptions): Promise<Plan> {
  const { ref, obj: desired } = await refOf(input, opts);
  const policy = objectPolicy(desired);
  const key = {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    namespace: ref.namespace || undefined,
    name: ref.name,
  };
  const id = knownVersionId(ref);
  const { client, impersonate } = opts;
  const hashOf = (payload: Manifest) =>
    createHash('sha256').update(JSON.stringify(payload)).digest('hex').slice(0, 16);
  const known = opts.knownVersions?.get(id);
  const versions = opts.versions?.client === client ? opts.versions : undefined;
  // The watch says the object is still at the version we last applied or found equal, with the
  // same payload: nothing drifted, so it is neither read nor dry-run. That version held no kubectl
  // fields to take over (they were taken over before it was remembered). Ignore rules and
  // IfNotPresent decide from the live object, so those objects are always read.
  if (
    known &&
    versions &&
    !opts.adjust &&
    policy.reconcile &&
    policy.ssa !== 'Ignore' &&
    policy.ssa !== 'IfNotPresent' &&
    Date.now() - known.readAt < READ_AS_TENANT_EVERY_MS &&
    versions.versionOf(key) === known.version
  ) {
    const payloadHash = hashOf(desired);
    if (payloadHash === known.payloadHash)
      return { change: { ref, action: 'unchanged' }, key, id, payload: desired, payloadHash };
  }
  // An object we have no version of (a first apply, a restart) needs its dry run whatever the live
  // object holds, unless ignore rules or ssa: IfNotPresent make the payload depend on it: the read
  // and the dry run then go out together, one round trip instead of two (or the dry run alone,
  // for an object no inventory lists).
  const early =
    !opts.adjust && policy.reconcile && policy.ssa !== 'Ignore' && policy.ssa !== 'IfNotPresent' && !known
      ? settle(applyWith(opts, desired, true))
      : undefined;
  try {
    let live: Manifest | undefined;
    // A dry run of a create answers without a resourceVersion: the object does not exist, so
    // there is nothing to read (an error, an immutable field included, means it may: read it).
    const absent =
      early && opts.mayExist?.(ref) === false
        ? await early.then((s) => 'ok' in s && !s.ok.metadata.resourceVersion)
        : false;
    if (!absent) {
      try {
        live = await client.get<Manifest & { metadata: { name: string } }>(key, impersonate);
      } catch (err) {
        if (!(err instanceof ApiError && err.isNotFound)) throw err;
      }
    }
    versions?.follow(key);
    const plan = (payload: Manifest, action: ApplyAction, write?: Plan['write']): Plan => ({
      change: { ref, action, live },
      key,
      id,
      payload,
      payloadHash: hashOf(payload),
      write,
    });
    if (!policy.reconcile || policy.ssa === 'Ignore') return plan(desired, 'skipped');
    if (live && policy.ssa === 'IfNotPresent') return plan(desired, 'skipped');
    const payload = opts.adjust ? opts.adjust(desired, live) : desired;
    const unchanged = plan(payload, 'unchanged');
    const version = live?.metadata.resourceVersion as string | undefined;
    const takeOver =
      live && policy.ssa === 'Override' ? takeOverForeignFields(live, FIELD_MANAGER) : undefined;
    if (
      !takeOver &&
      live &&
      version &&
      known?.version === version &&
      known.payloadHash === unchanged.payloadHash
    ) {
      known.readAt = Date.now();
      return unchanged;
    }
    let dry: Manifest;
    try {
      dry = early ? unsettle(await early) : await applyWith(opts, payload, true);
    } catch (err) {
      if (live && isImmutableError(err) && (opts.force || policy.force))
        return { ...unchanged, write: 'recreate' };
      throw err;
    }
    const changedBy = live ? driftedFieldManagers(live, dry, FIELD_MANAGER) : [];
    // kubectl's edits are taken over even when the dry run (which forces ownership) sees no change.
    if (takeOver) return { ...unchanged, write: 'take-over', takeOver, changedBy };
    if (live && !wouldChange(live, dry)) {
      if (version)
        opts.knownVersions?.set(id, { version, payloadHash: unchanged.payloadHash, readAt: Date.now() });
      return unchanged;
    }
    return { ...unchanged, write: 'apply', changedBy };
  } catch (err) {
    if (err instanceof ApplyError) throw err;
    throw new ApplyError(ref, `${describe(ref)}: ${(err as Error).message}`);
  }
}

/** Writes what the plan decided. */
async function execute(plan: Plan, opts: ApplySetOptions): Promise<ApplyChange> {
  const { ref, live } = plan.change;
  if (!plan.write) return plan.change;
  const remember = (version: string | undefined) => {
    if (version)
      opts.knownVersions?.set(plan.id, { version, payloadHash: plan.payloadHash, readAt: Date.now() });
  };
  try {
    if (plan.write === 'recreate') return await recreate(ref, plan.key, plan.payload, opts);
    if (plan.write === 'take-over') {
      await opts.client.jsonPatch(
        plan.key,
        [
          { op: 'test', path: '/metadata/resourceVersion', value: live?.metadata.resourceVersion },
          { op: 'replace', path: '/metadata/managedFields', value: plan.takeOver },
        ],
        opts.impersonate,
      );
    }
    let result: Manifest;
    try {
      result = await applyWith(opts, plan.payload);
    } catch (err) {
      if (isImmutableError(err) && (opts.force || objectPolicy(plan.payload).force))
        return await recreate(ref, plan.key, plan.payload, opts);
      throw err;
    }
    remember(result.metadata.resourceVersion as string | undefined);
    const changedBy = plan.changedBy?.length ? { changedBy: plan.changedBy } : {};
    return { ref, action: live ? 'configured' : 'created', live: result, ...changedBy };
  } catch (err) {
    if (err instanceof ApplyError) throw err;
    throw new ApplyError(ref, `${describe(ref)}: ${(err as Error).message}`);
  }
}

/** Deletes and re-creates an object whose immutable fields changed, waiting for the old one to go. */
async function recreate(
  ref: ObjectRef,
  key: ObjectKey,
  payload: Manifest,
  opts: ApplySetOptions,
): Promise<ApplyChange> {
  // Background: Foreground needs the garbage collector to finish, which a bare API server lacks.
  await opts.client.delete(key, { propagationPolicy: 'Background', impersonate: opts.impersonate });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await opts.client.get(key, opts.impersonate);
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) break;
      throw err;
    }
    if (Date.now() > deadline)
      throw new ApplyError(ref, `${describe(ref)}: the old object did not go away within 30s`);
    if (opts.signal.aborted) throw new ApplyError(ref, `${describe(ref)}: cancelled while recreating`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const result = (await opts.client.apply(payload as Manifest & { metadata: { name: string } }, {
    fieldManager: FIELD_MANAGER,
    force: true,
    impersonate: opts.impersonate,
  })) as Manifest;
  return { ref, action: 'recreated', live: result };
}
