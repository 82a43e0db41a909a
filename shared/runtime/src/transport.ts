import type { Readable } from 'node:stream';

/** One HTTP exchange with the API server; `path` already carries the query string. */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface TransportResponse {
  statusCode: number;
  body: string;
}

export interface TransportStream {
  statusCode: number;
  body: Readable;
}

/**
 * How the client reaches an API server. The HTTPS transport is the real one; the seam exists so the
 * deterministic simulation tests can put an in-memory API server behind the same client.
 */
export interface ApiTransport {
  send(req: TransportRequest): Promise<TransportResponse>;
  /** Opens a long-lived response (watch) and hands back the body as a stream. */
  openStream(req: TransportRequest): Promise<TransportStream>;
  close(): void;
}
