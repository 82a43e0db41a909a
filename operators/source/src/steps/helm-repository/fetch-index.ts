import { Reason } from '@mooring/api';
import { RetryableError, StalledError } from '@mooring/runtime';
import { indexUrlOf } from '../../helm/credentials.ts';
import { HttpStatusError, httpGet } from '../../helm/http-get.ts';
import { InvalidIndexError, normaliseIndex } from '../../helm/index-file.ts';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';
import { need } from '../../source-run.ts';

function fetchFailure(run: HelmRepositoryRun, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const secret = run.credentials?.secret;
  let reason: string = Reason.IndexationFailed;
  let message = (err as Error).message;
  if (err instanceof HttpStatusError && (err.status === 401 || err.status === 403)) {
    reason = Reason.AuthenticationFailed;
    message += secret
      ? `; check the credentials in Secret ${secret}`
      : '; the repository wants credentials: set spec.secretRef';
  } else if (err instanceof InvalidIndexError) {
    message = `invalid index: ${message}`;
  }
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason as Reason, message);
}

/**
 * Downloads `<url>/index.yaml` within the size limit and `spec.timeout`, refuses a YAML bomb or
 * an index of the wrong shape, and normalises it; its revision is the sha256 of the normalised bytes.
 */
export async function fetchIndex(run: HelmRepositoryRun): Promise<undefined> {
  const url = need(run.url, 'the parsed URL');
  const { credentials } = run;
  try {
    const body = await httpGet(indexUrlOf(url), {
      auth: credentials?.auth,
      passCredentials: run.obj.spec.passCredentials ?? false,
      tls: credentials?.tls,
      maxBytes: run.deps.maxIndexBytes,
      signal: run.ctx.deadline(run.timeoutMs),
      what: 'the repository index',
    });
    const index = normaliseIndex(body.toString('utf8'), run.deps.maxIndexBytes);
    if (index.skipped.length) {
      run.ctx.log.debug(
        { skipped: index.skipped.slice(0, 20) },
        'index entries with invalid versions left out',
      );
    }
    run.index = index;
    run.revision = index.revision;
  } catch (err) {
    fetchFailure(run, err);
  }
  return undefined;
}
