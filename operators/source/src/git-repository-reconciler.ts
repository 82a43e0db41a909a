import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Artifact,
  ConditionType,
  FINALIZER,
  type GitRepository,
  type GitRepositoryInclude,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import { type ArtifactStorage, ArtifactTooLargeError } from '@mooring/artifact';
import {
  type CheckoutResult,
  type GitAuth,
  GitAuthError,
  type GitClient,
  GitRefNotFoundError,
  type GitRefSpec,
  gitAuthFromSecret,
  InvalidGitCredentialsError,
  type ResolvedRef,
  verifyCheckout,
} from '@mooring/git';
import {
  type KubeClient,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  readSecretData,
  removeCondition,
  StalledError,
} from '@mooring/runtime';
import { loadExclusionFilter } from './ignore-rules.ts';
import { copyIncludes, type ResolvedInclude, resolveIncludes } from './include.ts';
import { markArtifactCurrent, markFetchFailed, markNewRevision } from './source-conditions.ts';
import { keepArtifact, verifiedArtifact } from './stored-artifact.ts';
import { deadlineSignal, specTimeoutMs } from './timeouts.ts';

export interface GitRepositoryDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  storageRoot: string;
  git: GitClient;
  /** Largest single file and whole artifact a repository may produce. */
  limits: { maxFileBytes: number; maxTotalBytes: number };
}

type VerifyMode = 'HEAD' | 'Tag' | 'TagAndHEAD';

/** What the current artifact was built from, beyond its revision: a change means building again. */
function builtFrom(obj: GitRepository, includes: ResolvedInclude[]): string {
  return JSON.stringify({
    ignore: obj.spec.ignore ?? null,
    sparse: obj.spec.sparseCheckout ?? [],
    include: obj.spec.include ?? [],
    included: includes.map((i) => i.artifact.digest),
    verify: obj.spec.verify?.mode ?? null,
  });
}

function observedFrom(status: GitRepository['status'], included: Artifact[] | undefined): string {
  return JSON.stringify({
    ignore: status?.observedIgnore ?? null,
    sparse: status?.observedSparseCheckout ?? [],
    include: status?.observedInclude ?? [],
    included: (included ?? []).map((a) => a.digest),
    verify: status?.sourceVerificationMode ?? null,
  });
}

/** The ref to fetch, Flux's default branch when none is given. */
function refOf(obj: GitRepository): GitRefSpec {
  const ref = obj.spec.ref ?? {};
  return Object.values(ref).some((v) => v) ? ref : { branch: 'master' };
}

function verifyModeOf(obj: GitRepository): VerifyMode | undefined {
  const mode = obj.spec.verify?.mode;
  if (!obj.spec.verify) return undefined;
  return !mode || mode === 'head' ? 'HEAD' : mode;
}

/** Turns a Git failure into FetchFailed and a retry; the messages come sanitised from @mooring/git. */
function fetchFailure(ctx: ReconcileContext, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const message = (err as Error).message;
  const reason = err instanceof GitAuthError ? Reason.AuthenticationFailed : Reason.GitOperationFailed;
  markFetchFailed(ctx, reason, message);
  if (err instanceof GitRefNotFoundError) throw new RetryableError(reason, message);
  throw new RetryableError(reason, message);
}

/**
 * GitRepository: resolve the ref cheaply; when the packed artifact already holds that revision
 * (and was built from the same spec), stop there. Otherwise fetch that one commit, verify its
 * signature, copy includes in, filter by the ignore rules and store the tar.gz.
 */
export function gitRepositoryReconciler(deps: GitRepositoryDeps): Reconciler<GitRepository> {
  const refOfObject = (obj: GitRepository) => ({
    kind: 'GitRepository',
    namespace: obj.metadata.namespace ?? 'default',
    name: obj.metadata.name ?? '',
  });

  async function credentials(obj: GitRepository): Promise<GitAuth | undefined> {
    const secret = obj.spec.secretRef?.name;
    if (!secret) return undefined;
    const data = await readSecretData(
      deps.client,
      obj.metadata.namespace ?? 'default',
      secret,
      'credentials',
    );
    try {
      return gitAuthFromSecret(data, obj.spec.url, secret);
    } catch (err) {
      if (err instanceof InvalidGitCredentialsError)
        throw new StalledError(Reason.InvalidProviderConfiguration, err.message);
      throw err;
    }
  }

  async function verificationKeys(obj: GitRepository): Promise<string[]> {
    const name = obj.spec.verify?.secretRef.name;
    if (!name) return [];
    const data = await readSecretData(deps.client, obj.metadata.namespace ?? 'default', name, 'verification');
    const keys = Object.entries(data)
      .filter(([k]) => k.endsWith('.asc'))
      .map(([, v]) => v);
    if (keys.length === 0) {
      throw new StalledError(Reason.VerificationError, `Secret ${name} has no OpenPGP public key (*.asc)`);
    }
    return keys;
  }

  /** Checks the signature the spec asks for; SourceVerified tells the outcome either way. */
  async function verify(obj: GitRepository, ctx: ReconcileContext, result: CheckoutResult): Promise<void> {
    const mode = verifyModeOf(obj);
    if (!mode) {
      ctx.status.conditions = removeCondition(ctx.status.conditions, ConditionType.SourceVerified);
      return;
    }
    const keys = await verificationKeys(obj);
    const outcome = await verifyCheckout(result, mode, keys);
    if (!outcome.verified) {
      const message = `signature verification of revision '${result.revision}' failed: ${outcome.reason}`;
      ctx.setCondition(ConditionType.SourceVerified, 'False', Reason.VerificationError, message);
      throw new RetryableError(Reason.VerificationError, message);
    }
    ctx.setCondition(
      ConditionType.SourceVerified,
      'True',
      Reason.Succeeded,
      `verified ${outcome.signatures.map((v) => `${v.object} signature with key ${v.keyId}`).join(' and ')} of revision '${result.revision}'`,
    );
  }

  async function build(
    obj: GitRepository,
    ctx: ReconcileContext,
    auth: GitAuth | undefined,
    includes: ResolvedInclude[],
    timeoutMs: number,
  ): Promise<{ checkout: CheckoutResult; artifact: Artifact }> {
    const workdir = await mkdtemp(join(tmpdir(), 'mooring-git-'));
    try {
      let checkout: CheckoutResult;
      try {
        checkout = await deps.git.checkout(obj.spec.url, refOf(obj), workdir, {
          auth,
          timeoutMs,
          signal: deadlineSignal(timeoutMs, ctx.signal),
          sparse: obj.spec.sparseCheckout?.length ? obj.spec.sparseCheckout : undefined,
          withSignatures: !!obj.spec.verify,
        });
      } catch (err) {
        fetchFailure(ctx, err);
      }
      await verify(obj, ctx, checkout);
      await copyIncludes(deps.storage, deps.storageRoot, workdir, includes);
      const filter = await loadExclusionFilter(workdir, obj.spec.ignore);
      let stored: Awaited<ReturnType<ArtifactStorage['archive']>>;
      try {
        stored = await deps.storage.archive(refOfObject(obj), workdir, { filter, ...deps.limits });
      } catch (err) {
        if (err instanceof ArtifactTooLargeError) {
          ctx.setCondition(
            ConditionType.StorageOperationFailed,
            'True',
            Reason.ArchiveOperationFailed,
            err.message,
          );
          throw new StalledError(Reason.ArchiveOperationFailed, err.message);
        }
        throw err;
      }
      ctx.status.conditions = removeCondition(ctx.status.conditions, ConditionType.StorageOperationFailed);
      return { checkout, artifact: { ...stored, revision: checkout.revision } };
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  }

  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 60_000,

    async reconcile(obj, ctx): Promise<ReconcileResult> {
      const status = ctx.status as NonNullable<GitRepository['status']>;
      const ref = refOfObject(obj);
      if (obj.spec.provider && obj.spec.provider !== 'generic') {
        throw new StalledError(
          Reason.InvalidProviderConfiguration,
          `provider '${obj.spec.provider}' is not supported yet; use secretRef credentials`,
        );
      }
      // Said plainly rather than ignored: an artifact without the submodules would apply the wrong thing.
      if (obj.spec.recurseSubmodules) {
        throw new StalledError('UnsupportedConfiguration', 'recurseSubmodules is not supported yet');
      }
      if (obj.spec.proxySecretRef) {
        throw new StalledError('UnsupportedConfiguration', 'proxySecretRef is not supported yet');
      }

      // Storage: a current artifact that went missing or was corrupted is rebuilt.
      status.artifact = await verifiedArtifact(deps.storage, status.artifact, ctx);

      const auth = await credentials(obj);
      const timeoutMs = specTimeoutMs(obj.spec.timeout);
      let resolved: ResolvedRef;
      try {
        resolved = await deps.git.resolve(obj.spec.url, refOf(obj), {
          auth,
          timeoutMs,
          signal: deadlineSignal(timeoutMs, ctx.signal),
        });
      } catch (err) {
        fetchFailure(ctx, err);
      }
      const includes = await resolveIncludes(
        deps.client,
        ref.namespace,
        ref.name,
        (obj.spec.include ?? []) as GitRepositoryInclude[],
      ).catch((err: unknown) => {
        ctx.setCondition(
          ConditionType.IncludeUnavailable,
          'True',
          'IncludeUnavailable',
          (err as Error).message,
        );
        throw err;
      });

      const current = status.artifact;
      const upToDate =
        current !== undefined &&
        current.revision === resolved.revision &&
        builtFrom(obj, includes) === observedFrom(status, status.includedArtifacts);
      if (upToDate) {
        // The cheap path: one remote call, nothing written but the advertised URL if it moved.
        const kept = keepArtifact(deps.storage, current, ctx);
        status.artifact = kept.artifact;
        return kept.result;
      }

      markNewRevision(ctx, current?.revision, resolved.revision);
      const { checkout, artifact } = await build(obj, ctx, auth, includes, timeoutMs);
      status.artifact = artifact;
      status.includedArtifacts = includes.length ? includes.map((i) => i.artifact) : undefined;
      status.observedIgnore = obj.spec.ignore;
      status.observedInclude = obj.spec.include;
      status.observedSparseCheckout = obj.spec.sparseCheckout;
      status.sourceVerificationMode = verifyModeOf(obj);
      markArtifactCurrent(ctx, artifact.revision);
      ctx.event('info', 'NewArtifact', `stored artifact for commit '${checkout.head.subject}'`, {
        revision: artifact.revision,
        digest: artifact.digest ?? '',
      });
      const removed = await deps.storage.gc(ref, artifact);
      if (removed.length) ctx.log.debug({ removed }, 'garbage-collected old artifacts');
      return { message: `stored artifact for revision '${artifact.revision}'`, revision: artifact.revision };
    },

    async finalize(obj) {
      await deps.storage.remove(refOfObject(obj));
    },

    // A repository that includes another is rebuilt as soon as the included one stores a new artifact.
    watches: [
      {
        apiVersion: SOURCE_API_VERSION,
        kind: 'GitRepository',
        enqueue(changed, old, objects) {
          const digest = (o: unknown) => (o as GitRepository | undefined)?.status?.artifact?.digest;
          if (digest(changed) === digest(old)) return [];
          const { namespace, name } = changed.metadata;
          return objects
            .filter(
              (o) =>
                o.metadata.namespace === namespace &&
                (o.spec.include ?? []).some((i) => i.repository.name === name),
            )
            .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        },
      },
    ],
  };
}
