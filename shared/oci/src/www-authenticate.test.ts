import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWwwAuthenticate } from './www-authenticate.ts';

test('parses the challenges registries send', () => {
  const cases: [string, ReturnType<typeof parseWwwAuthenticate>][] = [
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/alpine:pull"',
      [
        {
          scheme: 'bearer',
          params: {
            realm: 'https://auth.docker.io/token',
            service: 'registry.docker.io',
            scope: 'repository:library/alpine:pull',
          },
        },
      ],
    ],
    ['Basic realm="Registry Realm"', [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]],
    [
      'Basic realm="a", Bearer realm="https://x/token", scope="repository:a:pull,push"',
      [
        { scheme: 'basic', params: { realm: 'a' } },
        { scheme: 'bearer', params: { realm: 'https://x/token', scope: 'repository:a:pull,push' } },
      ],
    ],
    [
      'bearer realm=https://x/t , service=reg',
      [{ scheme: 'bearer', params: { realm: 'https://x/t', service: 'reg' } }],
    ],
    ['Bearer realm="a\\"b"', [{ scheme: 'bearer', params: { realm: 'a"b' } }]],
    ['', []],
  ];
  for (const [header, want] of cases) assert.deepEqual(parseWwwAuthenticate(header), want, header);
});

test('garbage never throws or hangs', () => {
  for (const header of ['=', '"', '===,,,"', 'Bearer realm="unterminated', ',,,', 'a=b', '\u0000\u0001']) {
    assert.ok(Array.isArray(parseWwwAuthenticate(header)), header);
  }
});
