import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceKey } from './source-address.ts';

test('sourceKey: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
  assert.equal(sourceKey('203.0.113.7'), '203.0.113.7');
  assert.equal(sourceKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(sourceKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(sourceKey('::1'), '0:0:0:0::/64');
  assert.equal(sourceKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(sourceKey(undefined), 'unknown');
});
