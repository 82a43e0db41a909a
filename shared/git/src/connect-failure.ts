/**
 * Why a Git client could not reach its server at all, in words. Over SSH git only says "Could not
 * read from remote repository", which reads like a permissions problem; ssh's own line before it
 * ("ssh: connect to host 127.0.0.1 port 1: Connection refused") says what happened.
 */

/** `cannot connect to <host> port <port>: <what happened>`, from the system's reason (strerror text). */
export function describeConnectFailure(host: string, port: string | number, reason: string): string {
  return `cannot connect to ${host} port ${port}: ${explain(reason)}`;
}

function explain(reason: string): string {
  const r = reason.trim().replace(/[.\s]+$/, '');
  if (/refused/i.test(r)) return 'connection refused (nothing listens on that port)';
  if (/timed out/i.test(r))
    return 'connection timed out (no answer: check the host, the port and any firewall)';
  if (/no route to host|host is unreachable/i.test(r)) return 'host unreachable (no route to host)';
  if (/network is unreachable/i.test(r)) return 'network unreachable';
  return r.charAt(0).toLowerCase() + r.slice(1);
}

/**
 * The connection failure ssh reported on stderr, or undefined when ssh reached the server (then any
 * error came later: authentication, host key, the repository).
 */
export function sshConnectFailure(stderrLines: string[]): string | undefined {
  let closedBy: RegExpExecArray | undefined;
  let handshake: string | undefined;
  for (const line of stderrLines) {
    let m = /^ssh: connect to host (\S+) port (\d+): (.+)$/.exec(line);
    if (m) return describeConnectFailure(m[1]!, m[2]!, m[3]!);
    m = /^ssh: Could not resolve hostname (\S+?): (.+)$/.exec(line);
    if (m) return `cannot resolve the host name ${m[1]}: ${explain(m[2]!)}`;
    // A ConnectTimeout that ran out after TCP connected but before the server's banner.
    m = /^Connection to (\S+) port (\d+) timed out/.exec(line);
    if (m) return describeConnectFailure(m[1]!, m[2]!, 'timed out');
    m = /^kex_exchange_identification: (.+)$/.exec(line);
    if (m) handshake = explain(m[1]!);
    m = /^Connection (?:closed|reset) by (\S+) port (\d+)/.exec(line);
    if (m) closedBy = m;
  }
  // Something accepted the connection but did not speak SSH (or hung up at once).
  if (handshake) {
    const where = closedBy ? `${closedBy[1]} port ${closedBy[2]}` : 'the server';
    return `${where} accepted the connection but the SSH handshake failed: ${handshake} (is an SSH server listening there?)`;
  }
  return undefined;
}

/** The same description from curl's message, which `git fetch` over http(s) passes on. */
export function curlConnectFailure(stderrLines: string[]): string | undefined {
  for (const line of stderrLines) {
    const m = /Failed to connect to (\S+) port (\d+)(?: after \d+ ms)?: (.+)$/.exec(line);
    if (m) return describeConnectFailure(m[1]!, m[2]!, m[3]!);
  }
  return undefined;
}

const ERRNO_REASON: Record<string, string> = {
  ECONNREFUSED: 'Connection refused',
  ETIMEDOUT: 'Connection timed out',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
};

/** The same description for a Node.js socket error (`connect ECONNREFUSED 127.0.0.1:1`), if it is one. */
export function errnoConnectFailure(err: unknown): string | undefined {
  const e = err as {
    code?: unknown;
    address?: unknown;
    port?: unknown;
    hostname?: unknown;
    syscall?: unknown;
  };
  if (typeof e?.code !== 'string') return undefined;
  if ((e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') && typeof e.hostname === 'string')
    return `cannot resolve the host name ${e.hostname}`;
  const reason = ERRNO_REASON[e.code];
  if (!reason || e.syscall !== 'connect' || typeof e.address !== 'string') return undefined;
  return describeConnectFailure(e.address, typeof e.port === 'number' ? e.port : '?', reason);
}
