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

// Why a connection to the API server failed, in plain words, by the error's code.
const CONNECTION_PROBLEMS: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections there (connection refused)',
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name could not be looked up',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was closed by the other end',
};
const TLS_PROBLEMS =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/** Why the API server could not be reached, in plain words, when `err` is a network or TLS failure. */
export function connectionProblem(err: unknown): string | undefined {
  for (let e = err as NodeJS.ErrnoException | undefined, depth = 0; e && depth < 3; depth++) {
    if (typeof e.code === 'string') {
      const problem = CONNECTION_PROBLEMS[e.code];
      if (problem) return problem;
      if (TLS_PROBLEMS.test(e.code)) return `its TLS certificate is not trusted (${e.message})`;
    }
    e = (e as { cause?: NodeJS.ErrnoException }).cause;
  }
  return undefined;
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
