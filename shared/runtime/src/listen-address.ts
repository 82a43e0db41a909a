/** Where a server listens: no host means every interface; port 0 asks the OS for a free port. */
export interface ListenAddress {
  host: string | undefined;
  port: number;
}

/** Parses `:8080`, `127.0.0.1:8080`, `[::1]:8080`, `localhost:0`, `8080` or `0`; throws a RangeError otherwise. */
export function parseListenAddress(text: string): ListenAddress {
  const bad = (why: string) => new RangeError(`invalid listen address ${JSON.stringify(text)}: ${why}`);
  let host: string | undefined;
  let portText: string;
  const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2]!;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon === -1) {
      portText = text;
    } else {
      host = text.slice(0, colon) || undefined;
      portText = text.slice(colon + 1);
      if (host?.includes(':')) throw bad('write an IPv6 host in brackets, like [::1]:8080');
    }
  }
  if (!/^[0-9]{1,5}$/.test(portText)) throw bad('expected [host]:port, like :8080 or 127.0.0.1:8080');
  const port = Number(portText);
  if (port > 65_535) throw bad('port must be at most 65535');
  if (host !== undefined && !/^[A-Za-z0-9.:%_-]+$/.test(host)) throw bad(`bad host ${JSON.stringify(host)}`);
  return { host, port };
}

/** `host:port` for messages, with IPv6 hosts bracketed. */
export function formatListenAddress(addr: ListenAddress): string {
  if (addr.host === undefined) return `:${addr.port}`;
  return addr.host.includes(':') ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}
