import { type Clock, systemClock } from './clock.ts';
import type { Metrics } from './metrics.ts';
import type { ApiTransport, TransportRequest, TransportResponse, TransportStream } from './transport.ts';

/**
 * Wraps a transport so every API request is timed into `mooring_api_request_duration_seconds`.
 * A watch is timed until its response headers arrive, with verb `WATCH`.
 */
export function instrumentTransport(
  inner: ApiTransport,
  metrics: Pick<Metrics, 'observeApiRequest'>,
  clock: Clock = systemClock,
): ApiTransport {
  async function timed<T extends TransportResponse | TransportStream>(
    verb: string,
    call: () => Promise<T>,
  ): Promise<T> {
    const start = clock.now();
    try {
      const res = await call();
      metrics.observeApiRequest(verb, res.statusCode, (clock.now() - start) / 1000);
      return res;
    } catch (err) {
      metrics.observeApiRequest(verb, 'error', (clock.now() - start) / 1000);
      throw err;
    }
  }
  return {
    send: (req: TransportRequest) => timed(req.method, () => inner.send(req)),
    openStream: (req: TransportRequest) => timed('WATCH', () => inner.openStream(req)),
    close: () => inner.close(),
  };
}
