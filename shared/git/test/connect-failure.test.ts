import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { curlConnectFailure, errnoConnectFailure, sshConnectFailure } from '../src/connect-failure.ts';

const GIT_SUMMARY = [
  'fatal: Could not read from remote repository.',
  'Please make sure you have the correct access rights',
  'and the repository exists.',
];

describe('sshConnectFailure', () => {
  const cases: [string, string[], string | undefined][] = [
    [
      'a closed port',
      ['ssh: connect to host 127.0.0.1 port 1: Connection refused', ...GIT_SUMMARY],
      'cannot connect to 127.0.0.1 port 1: connection refused (nothing listens on that port)',
    ],
    [
      'a host that does not answer',
      ['ssh: connect to host 10.255.255.1 port 22: Connection timed out', ...GIT_SUMMARY],
      'cannot connect to 10.255.255.1 port 22: connection timed out (no answer: check the host, the port and any firewall)',
    ],
    [
      'ConnectTimeout running out before the banner',
      [
        'Connection timed out during banner exchange',
        'Connection to 10.255.255.1 port 22 timed out',
        ...GIT_SUMMARY,
      ],
      'cannot connect to 10.255.255.1 port 22: connection timed out (no answer: check the host, the port and any firewall)',
    ],
    [
      'no route',
      ['ssh: connect to host git.example port 22: No route to host', ...GIT_SUMMARY],
      'cannot connect to git.example port 22: host unreachable (no route to host)',
    ],
    [
      'no network',
      ['ssh: connect to host 192.0.2.1 port 2222: Network is unreachable', ...GIT_SUMMARY],
      'cannot connect to 192.0.2.1 port 2222: network unreachable',
    ],
    [
      'a local policy refusing the connect',
      ['ssh: connect to host git.example port 22: Permission denied', ...GIT_SUMMARY],
      'cannot connect to git.example port 22: permission denied',
    ],
    [
      'an unknown host name',
      ['ssh: Could not resolve hostname nope.invalid: Name or service not known', ...GIT_SUMMARY],
      'cannot resolve the host name nope.invalid: name or service not known',
    ],
    [
      'a port where something else listens',
      [
        'kex_exchange_identification: Connection closed by remote host',
        'Connection closed by 127.0.0.1 port 8080',
        ...GIT_SUMMARY,
      ],
      '127.0.0.1 port 8080 accepted the connection but the SSH handshake failed: connection closed by remote host (is an SSH server listening there?)',
    ],
    // Reached the server: authentication and repository errors are someone else's to describe.
    ['a refused key', ['root@127.0.0.1: Permission denied (publickey).', ...GIT_SUMMARY], undefined],
    ['a changed host key', ['Host key verification failed.', ...GIT_SUMMARY], undefined],
    [
      'a missing repository',
      ["fatal: '/x.git' does not appear to be a git repository", ...GIT_SUMMARY],
      undefined,
    ],
  ];
  for (const [name, lines, want] of cases) {
    it(name, () => assert.equal(sshConnectFailure(lines), want));
  }
});

describe('curlConnectFailure', () => {
  it('reads the host and port from git fetch over http', () => {
    const line =
      "fatal: unable to access 'http://127.0.0.1:1/x.git/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server";
    assert.equal(
      curlConnectFailure([line]),
      "cannot connect to 127.0.0.1 port 1: couldn't connect to server",
    );
    assert.equal(
      curlConnectFailure([
        'fatal: unable to access ...: Failed to connect to h port 443: Connection refused',
      ]),
      'cannot connect to h port 443: connection refused (nothing listens on that port)',
    );
    assert.equal(curlConnectFailure(['fatal: Authentication failed for ...']), undefined);
  });
});

describe('errnoConnectFailure', () => {
  it('describes socket errors and leaves others alone', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
      address: '127.0.0.1',
      port: 1,
    });
    assert.equal(
      errnoConnectFailure(refused),
      'cannot connect to 127.0.0.1 port 1: connection refused (nothing listens on that port)',
    );
    const unreachable = { code: 'EHOSTUNREACH', syscall: 'connect', address: '10.0.0.9', port: 443 };
    assert.equal(
      errnoConnectFailure(unreachable),
      'cannot connect to 10.0.0.9 port 443: host unreachable (no route to host)',
    );
    assert.equal(
      errnoConnectFailure({ code: 'ENOTFOUND', hostname: 'nope.invalid', syscall: 'getaddrinfo' }),
      'cannot resolve the host name nope.invalid',
    );
    assert.equal(errnoConnectFailure({ code: 'EPIPE', syscall: 'write' }), undefined);
    assert.equal(errnoConnectFailure(new Error('plain')), undefined);
    assert.equal(errnoConnectFailure(undefined), undefined);
  });
});
