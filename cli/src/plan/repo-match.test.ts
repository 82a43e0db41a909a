import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeRepoUrl, repoMatcher } from './repo-match.ts';

test('a repository URL is the same whatever the scheme, user, port and .git', () => {
  const same = [
    'https://github.com/acme/fleet',
    'https://github.com/acme/fleet.git',
    'https://x-access-token:secret@GitHub.com/acme/fleet/',
    'ssh://git@github.com:22/acme/fleet.git',
    'git@github.com:acme/fleet.git',
    'http://github.com/acme/fleet',
  ];
  for (const url of same) assert.equal(normalizeRepoUrl(url), 'github.com/acme/fleet', url);
  assert.equal(normalizeRepoUrl('https://gitlab.com/group/sub/app.git'), 'gitlab.com/group/sub/app');
  assert.notEqual(normalizeRepoUrl('https://github.com/acme/other'), 'github.com/acme/fleet');
  assert.equal(normalizeRepoUrl('not a url'), undefined);
  assert.equal(normalizeRepoUrl('https://github.com/'), undefined);
});

test('a GitRepository is this repository when its URL is a remote, or when --source names it', () => {
  const declared = [
    { namespace: 'flux-system', name: 'fleet', url: 'ssh://git@github.com/acme/fleet' },
    { namespace: 'flux-system', name: 'charts', url: 'https://github.com/acme/charts' },
  ];
  const byRemote = repoMatcher([], ['https://github.com/acme/fleet.git'], declared);
  assert.ok(byRemote.matches({ namespace: 'flux-system', name: 'fleet' }));
  assert.ok(!byRemote.matches({ namespace: 'flux-system', name: 'charts' }));
  assert.ok(!byRemote.matches({ namespace: 'default', name: 'fleet' }));
  const bySource = repoMatcher(['flux-system/charts'], ['https://github.com/acme/fleet.git'], declared);
  assert.ok(bySource.matches({ namespace: 'flux-system', name: 'charts' }));
  assert.ok(!bySource.matches({ namespace: 'flux-system', name: 'fleet' }));
  assert.match(
    repoMatcher([], [], declared).describe,
    /no GitRepository declared here has the URL of a remote/,
  );
});
