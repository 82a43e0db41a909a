import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GitRepository } from '@mooring/api';
import { GitAuthError, GitError, GitRefNotFoundError } from '@mooring/git';
import { explainGitFailure } from './git-failure.ts';

const repo = (url: string, secret?: string): GitRepository =>
  ({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { namespace: 'team', name: 'app' },
    spec: { url, interval: '1m', ...(secret ? { secretRef: { name: secret } } : {}) },
  }) as GitRepository;

test('a refused login names the Secret whose credentials were sent, or says none is set', () => {
  const refused = new GitAuthError(
    'Git authentication failed on https://git.example/app.git during ls-remote: HTTP Error: 401 Unauthorized.',
  );
  assert.equal(
    explainGitFailure(repo('https://git.example/app.git', 'creds'), refused),
    'Git authentication failed with the credentials in Secret team/creds on https://git.example/app.git during ls-remote: HTTP Error: 401 Unauthorized.',
  );
  assert.equal(
    explainGitFailure(repo('https://git.example/app.git'), refused),
    `the server asks for credentials and spec.secretRef is not set: ${refused.message}`,
  );
});

test('a host key that does not match points at known_hosts in the Secret', () => {
  const err = new GitAuthError(
    'Git authentication failed on ssh://git@git.example/app.git during ls-remote: Host key verification failed.',
  );
  assert.match(
    explainGitFailure(repo('ssh://git@git.example/app.git', 'ssh-key'), err),
    /^the server's host key does not match known_hosts in Secret team\/ssh-key: .*Host key verification failed/,
  );
});

test('an HTTP 404, as either Git backend words it, is "repository not found" at the URL, without userinfo', () => {
  const url = 'https://bot:hunter2@git.example/app.git';
  for (const message of [
    'Git ls-remote on https://git.example/app.git failed: HTTP Error: 404 Not Found.',
    "Git fetch on https://git.example/app.git failed: repository 'https://git.example/app.git/' not found.",
  ]) {
    assert.equal(
      explainGitFailure(repo(url), new GitError(message)),
      'repository not found at https://git.example/app.git',
    );
    assert.equal(
      explainGitFailure(repo(url, 'creds'), new GitError(message)),
      'repository not found at https://git.example/app.git, or the credentials in Secret team/creds may not read it',
    );
  }
});

test('other failures, a missing ref among them, keep their own message', () => {
  const missingRef = new GitRefNotFoundError(
    "Git branch 'nope' was not found on https://git.example/app.git.",
    'nope',
  );
  assert.equal(explainGitFailure(repo('https://git.example/app.git'), missingRef), missingRef.message);
  const unreachable = new GitError('Git ls-remote on http://127.0.0.1:9/x.git failed: connection refused.');
  assert.equal(explainGitFailure(repo('http://127.0.0.1:9/x.git'), unreachable), unreachable.message);
});
