/** The Kubernetes `Status` object an API server returns with a failed request. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

/** A failed API request, carrying the API server's own message so callers can show it as-is. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  readonly status: ApiStatus | undefined;

  constructor(
    method: string,
    path: string,
    statusCode: number,
    status: ApiStatus | undefined,
    rawBody: string,
  ) {
    const detail = status?.message ?? (rawBody.trim().slice(0, 500) || `HTTP ${statusCode}`);
    super(`${method} ${path}: ${detail}`);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.reason = status?.reason ?? '';
    this.status = status;
  }

  get isNotFound(): boolean {
    return this.statusCode === 404;
  }
  get isConflict(): boolean {
    return this.statusCode === 409;
  }
  get isGone(): boolean {
    return this.statusCode === 410;
  }
  get isInvalid(): boolean {
    return this.statusCode === 422;
  }
}
