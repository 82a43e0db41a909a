// Raw HTTP to a UI server, so a test can send the Host, Origin, cookie and proxy headers a
// browser, another page or a proxy would. Shared by the local and the in-cluster UI tests.
import { type IncomingHttpHeaders, request } from 'node:http';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function call(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
