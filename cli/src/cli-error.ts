// Only the shape of the runtime's ApiError, so commands that never talk to a cluster do not load it.
interface ApiErrorLike {
  name: string;
  message: string;
  statusCode: number;
  status?: { message?: string };
}

function isApiError(err: unknown): err is ApiErrorLike {
  return (
    err instanceof Error &&
    err.name === 'ApiError' &&
    typeof (err as { statusCode?: unknown }).statusCode === 'number'
  );
}

/** Exit codes users and scripts can rely on. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_ERROR = 2;

/** A failure to show as one sentence with the next step, and the exit code to leave with. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;

  constructor(message: string, exitCode = EXIT_FAILURE) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** One readable sentence for any error a command throws; API answers become advice. */
export function describeError(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (isApiError(err)) {
    const detail = err.status?.message ?? err.message;
    if (err.statusCode === 401)
      return `the API server refused the credentials (${detail}): check --kubeconfig and --context.`;
    if (err.statusCode === 403) return `permission denied: ${detail}.`;
    if (err.statusCode === 404 && /the server could not find the requested resource/.test(detail))
      return `the cluster does not serve this kind (${detail}): install Mooring's CRDs with 'mooring install'.`;
    return `${detail}.`;
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ENOTFOUND' || e?.code === 'EHOSTUNREACH')
    return `cannot reach the API server (${e.message}): check --kubeconfig and --context, or start a cluster.`;
  return err instanceof Error ? err.message : String(err);
}
