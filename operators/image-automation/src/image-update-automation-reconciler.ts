import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FINALIZER,
  type GitRepository,
  IMAGE_API_VERSION,
  type ImagePolicy,
  type ImageRef,
  type ImageUpdateAutomation,
  type LabelSelector,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  type CheckoutResult,
  type CommitOptions,
  type GitAuth,
  GitAuthError,
  type GitClient,
  GitError,
  GitRefNotFoundError,
  gitAuthFromSecret,
  InvalidGitCredentialsError,
  PushRejectedError,
} from '@mooring/git';
import {
  ApiError,
  getCondition,
  type KubeClient,
  parseDuration,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  readSecretData,
  StalledError,
  timeoutSignal,
  WaitingError,
} from '@mooring/runtime';
import { commitMessageData, InvalidTemplateError, renderCommitMessage } from './commit-message.ts';
import { checkCrossNamespace } from './cross-namespace.ts';
import type { PolicyImage } from './setters.ts';
import { InvalidUpdatePathError, type UpdateOutcome, updateFiles } from './update-files.ts';

export interface ImageUpdateAutomationDeps {
  client: KubeClient;
  git: GitClient;
  noCrossNamespaceRefs: boolean;
  dependencyRequeueMs: number;
  /** Tries at a push the remote rejects because the branch moved; each starts from a fresh clone. */
  maxPushAttempts?: number;
}

const DEFAULT_GIT_TIMEOUT_MS = 60_000;
const DEFAULT_AUTHOR_NAME = 'Mooring';

/** `metav1.LabelSelector` as the API server's `labelSelector` query parameter. */
export function selectorString(selector: LabelSelector | undefined): string | undefined {
  if (!selector) return undefined;
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${e.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(e.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
      default:
        throw new StalledError(
          Reason.InvalidPolicySelector,
          `policySelector operator ${JSON.stringify(e.operator)} is not one of In, NotIn, Exists, DoesNotExist`,
        );
    }
  }
  return parts.length ? parts.join(',') : undefined;
}

/** A Git failure as a reconcile error; @mooring/git has already taken credentials out of the message. */
function gitFailure(err: unknown): Error {
  if (err instanceof StalledError || err instanceof RetryableError || err instanceof WaitingError) return err;
  const message = (err as Error).message.replace(/\.$/, '');
  if (err instanceof GitAuthError) return new RetryableError(Reason.AuthenticationFailed, message);
  if (err instanceof GitError) return new RetryableError(Reason.GitOperationFailed, message);
  return err as Error;
}

interface RunOutcome {
  checkout: CheckoutResult;
  update: UpdateOutcome;
  commit?: string;
  message?: string;
}

/**
 * ImageUpdateAutomation: clone the GitRepository's branch, rewrite the values marked with
 * `$imagepolicy` setters to the images the selected ImagePolicies chose, and when anything changed,
 * commit (signed when asked) and push to `git.push.branch`. A push rejected because the branch
 * moved starts again from a fresh clone, a bounded number of times.
 */
export function imageUpdateAutomationReconciler(
  deps: ImageUpdateAutomationDeps,
): Reconciler<ImageUpdateAutomation> {
  const maxAttempts = deps.maxPushAttempts ?? 3;

  async function source(auto: ImageUpdateAutomation): Promise<{ repo: GitRepository; auth?: GitAuth }> {
    const namespace = auto.metadata.namespace ?? 'default';
    const ref = auto.spec.sourceRef;
    if ((ref.kind ?? 'GitRepository') !== 'GitRepository') {
      throw new StalledError(
        Reason.InvalidSourceConfiguration,
        `sourceRef kind ${ref.kind} is not supported; use GitRepository`,
      );
    }
    const srcNs = ref.namespace ?? namespace;
    const what = `GitRepository ${srcNs}/${ref.name}`;
    await checkCrossNamespace(deps.client, {
      noCrossNamespaceRefs: deps.noCrossNamespaceRefs,
      from: namespace,
      to: srcNs,
      what,
      accessFrom: null,
    });
    const repo = await deps.client.getOrUndefined<GitRepository>({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      namespace: srcNs,
      name: ref.name,
    });
    if (!repo)
      throw new WaitingError(Reason.DependencyNotReady, `${what} not found`, deps.dependencyRequeueMs);
    const secret = repo.spec.secretRef?.name;
    if (!secret) return { repo };
    const data = await readSecretData(deps.client, srcNs, secret, 'Git credentials');
    try {
      return { repo, auth: gitAuthFromSecret(data, repo.spec.url, secret) };
    } catch (err) {
      if (err instanceof InvalidGitCredentialsError)
        throw new StalledError('InvalidSourceConfiguration', err.message);
      throw err;
    }
  }

  async function signing(auto: ImageUpdateAutomation): Promise<CommitOptions> {
    const key = auto.spec.git.commit.signingKey;
    if (!key) return {};
    if ((key.type ?? 'gpg') !== 'gpg') {
      throw new StalledError(
        Reason.InvalidSourceConfiguration,
        `signing key type ${key.type} is not supported yet; use gpg`,
      );
    }
    const namespace = auto.metadata.namespace ?? 'default';
    const data = await readSecretData(deps.client, namespace, key.secretRef.name, 'signing key');
    const armored = data['git.asc'];
    if (!armored) {
      throw new StalledError(
        Reason.InvalidSourceConfiguration,
        `Secret ${namespace}/${key.secretRef.name} has no 'git.asc' key`,
      );
    }
    return { signingKey: armored, ...(data.passphrase ? { passphrase: data.passphrase } : {}) };
  }

  /** Ready ImagePolicies the selector picks, by name, and the images keyed as markers name them. */
  async function policies(auto: ImageUpdateAutomation): Promise<Map<string, ImageRef>> {
    const namespace = auto.metadata.namespace ?? 'default';
    let items: ImagePolicy[];
    try {
      const list = await deps.client.list<ImagePolicy>(IMAGE_API_VERSION, 'ImagePolicy', {
        namespace,
        labelSelector: selectorString(auto.spec.policySelector),
      });
      items = list.items;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 400) {
        throw new StalledError(Reason.InvalidPolicySelector, `policySelector is not a valid label selector`);
      }
      throw err;
    }
    const out = new Map<string, ImageRef>();
    for (const p of items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
      const ready = getCondition(p.status?.conditions, 'Ready');
      if (p.status?.latestRef && ready?.status === 'True') out.set(p.metadata.name ?? '', p.status.latestRef);
    }
    return out;
  }

  async function run(
    auto: ImageUpdateAutomation,
    ctx: ReconcileContext,
    url: string,
    branches: { checkout: string; push: string },
    images: Map<string, PolicyImage>,
    git: { auth?: GitAuth; timeoutMs: number; commit: CommitOptions },
  ): Promise<RunOutcome> {
    const opts = {
      auth: git.auth,
      timeoutMs: git.timeoutMs,
      signal: AbortSignal.any([timeoutSignal(git.timeoutMs), ctx.signal]),
    };
    const dir = await mkdtemp(join(tmpdir(), 'mooring-image-automation-'));
    try {
      let checkout: CheckoutResult;
      try {
        // Work on top of the push branch when it exists, so earlier automation commits are kept.
        checkout =
          branches.push === branches.checkout
            ? await deps.git.cloneForWrite(url, branches.checkout, dir, opts)
            : await deps.git.cloneForWrite(url, branches.push, dir, opts).catch(async (err: unknown) => {
                if (!(err instanceof GitRefNotFoundError)) throw err;
                await rm(dir, { recursive: true, force: true });
                return deps.git.cloneForWrite(url, branches.checkout, dir, opts);
              });
      } catch (err) {
        throw gitFailure(err);
      }
      let update: UpdateOutcome;
      try {
        update = await updateFiles(dir, auto.spec.update?.path, images);
      } catch (err) {
        if (err instanceof InvalidUpdatePathError) throw new StalledError(Reason.InvalidPath, err.message);
        throw new RetryableError(Reason.UpdateFailed, `updating files failed: ${(err as Error).message}`);
      }
      for (const s of update.skipped)
        ctx.log.warn({ path: s.path, err: s.error }, 'file with a setter marker is not valid YAML; skipped');
      if (update.files.length === 0) return { checkout, update };
      const message = renderCommitMessage(
        auto.spec.git.commit.messageTemplate,
        commitMessageData(
          { name: auto.metadata.name ?? '', namespace: auto.metadata.namespace ?? 'default' },
          update.files,
          auto.spec.git.commit.messageTemplateValues ?? {},
        ),
      );
      const author = auto.spec.git.commit.author;
      try {
        const commit = await deps.git.commit(
          dir,
          message,
          { name: author.name || DEFAULT_AUTHOR_NAME, email: author.email },
          git.commit,
        );
        if (!commit) return { checkout, update };
        await deps.git.push(dir, url, `HEAD:refs/heads/${branches.push}`, opts);
        const refspec = auto.spec.git.push?.refspec;
        if (refspec) await deps.git.push(dir, url, refspec, opts);
        return { checkout, update, commit, message };
      } catch (err) {
        if (err instanceof PushRejectedError) throw err;
        throw gitFailure(err);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImageUpdateAutomation',
    finalizer: FINALIZER,
    defaultIntervalMs: 5 * 60_000,

    async reconcile(auto, ctx): Promise<ReconcileResult> {
      const status = ctx.status as NonNullable<ImageUpdateAutomation['status']>;
      const strategy = auto.spec.update?.strategy ?? 'Setters';
      if (strategy !== 'Setters') {
        throw new StalledError(
          Reason.InvalidUpdateStrategy,
          `update strategy ${strategy} is not supported; use Setters`,
        );
      }
      // A template that cannot render fails now, not only once an image changes.
      try {
        renderCommitMessage(
          auto.spec.git.commit.messageTemplate,
          commitMessageData(
            { name: '', namespace: '' },
            [],
            auto.spec.git.commit.messageTemplateValues ?? {},
          ),
        );
      } catch (err) {
        if (err instanceof InvalidTemplateError)
          throw new StalledError('InvalidMessageTemplate', err.message);
        throw err;
      }
      const { repo, auth } = await source(auto);
      const ref = auto.spec.git.checkout?.ref ?? repo.spec.ref ?? {};
      if (ref.tag || ref.semver || ref.name || ref.commit) {
        throw new StalledError(
          Reason.InvalidSourceConfiguration,
          'the checkout ref must be a branch: set git.checkout.ref.branch',
        );
      }
      const checkoutBranch = ref.branch || 'master';
      const branches = { checkout: checkoutBranch, push: auto.spec.git.push?.branch || checkoutBranch };
      const commit = await signing(auto);
      const byPolicy = await policies(auto);
      const namespace = auto.metadata.namespace ?? 'default';
      const images = new Map<string, PolicyImage>(
        [...byPolicy].map(([name, image]) => [`${namespace}:${name}`, image]),
      );
      let timeoutMs = DEFAULT_GIT_TIMEOUT_MS;
      if (repo.spec.timeout) timeoutMs = parseDuration(repo.spec.timeout);

      let outcome: RunOutcome | undefined;
      for (let attempt = 1; !outcome; attempt++) {
        try {
          outcome = await run(auto, ctx, repo.spec.url, branches, images, { auth, timeoutMs, commit });
        } catch (err) {
          if (!(err instanceof PushRejectedError)) throw err;
          if (attempt >= maxAttempts) {
            throw new RetryableError(
              Reason.GitOperationFailed,
              `push to branch '${branches.push}' was rejected ${attempt} times because the branch kept moving`,
            );
          }
          ctx.log.info(
            { attempt, branch: branches.push },
            'push rejected: the branch moved; trying again from a fresh clone',
          );
        }
      }

      const now = ctx.now().toISOString();
      status.lastAutomationRunTime = now;
      status.observedPolicies = Object.fromEntries(byPolicy);
      if (!outcome.commit) {
        status.observedSourceRevision = outcome.checkout.revision;
        return {
          message: `repository up to date at '${outcome.checkout.revision}'`,
          revision: outcome.checkout.revision,
        };
      }
      const revision = `${branches.push}@sha1:${outcome.commit}`;
      status.observedSourceRevision = revision;
      status.lastPushCommit = outcome.commit;
      status.lastPushTime = now;
      const changed = outcome.update.files.map((f) => f.path).join(', ');
      ctx.event(
        'info',
        'Succeeded',
        `pushed commit '${outcome.commit.slice(0, 12)}' to branch '${branches.push}' changing ${changed}\n${outcome.message}`,
        { revision },
      );
      return {
        message: `pushed commit '${outcome.commit.slice(0, 12)}' to branch '${branches.push}'`,
        revision,
      };
    },

    // A policy that picks a new image runs the automations of its namespace at once.
    watches: [
      {
        apiVersion: IMAGE_API_VERSION,
        kind: 'ImagePolicy',
        enqueue(changed, old, automations) {
          const latest = (o: unknown) =>
            JSON.stringify((o as ImagePolicy | undefined)?.status?.latestRef ?? null);
          if (!old || latest(changed) === latest(old)) return [];
          return automations
            .filter((a) => a.metadata.namespace === changed.metadata.namespace)
            .map((a) => `${a.metadata.namespace}/${a.metadata.name}`);
        },
      },
    ],
  };
}
