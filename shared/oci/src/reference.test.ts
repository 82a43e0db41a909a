import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHost, canonicalImageName, imageReference, parseOciUrl } from './reference.ts';

test('parseOciUrl splits host and repository', () => {
  const cases: [string, { host: string; repository: string }][] = [
    ['oci://127.0.0.1:5000/flux/app', { host: '127.0.0.1:5000', repository: 'flux/app' }],
    [
      'oci://ghcr.io/stefanprodan/manifests/podinfo',
      { host: 'ghcr.io', repository: 'stefanprodan/manifests/podinfo' },
    ],
    ['oci://GHCR.io/org/repo/', { host: 'ghcr.io', repository: 'org/repo' }],
    ['oci://localhost:5000/a__b/c-d.e', { host: 'localhost:5000', repository: 'a__b/c-d.e' }],
    ['oci://[::1]:5000/x', { host: '[::1]:5000', repository: 'x' }],
  ];
  for (const [url, want] of cases) assert.deepEqual(parseOciUrl(url), want, url);
});

test('parseOciUrl rejects anything else with a clear message', () => {
  const cases: [string, RegExp][] = [
    ['https://ghcr.io/org/repo', /must start with oci:\/\//],
    ['ghcr.io/org/repo', /must start with oci:\/\//],
    ['oci://ghcr.io', /needs a host and a repository/],
    ['oci://ghcr.io/org/repo:v1', /must not contain a tag/],
    ['oci://ghcr.io/org/repo@sha256:abc', /must not contain credentials or a digest/],
    ['oci://user:pw@ghcr.io/org/repo', /must not contain credentials/],
    ['oci://ghcr.io/Org/repo', /invalid repository path component "Org"/],
    ['oci://ghcr.io/org//repo', /invalid repository path component ""/],
    ['oci://ghcr.io/org/repo?x=1', /query/],
    ['oci://gh_cr.io/org/repo', /invalid registry host/],
    ['oci://host:99999/org/repo', /invalid port/],
  ];
  for (const [url, want] of cases) assert.throws(() => parseOciUrl(url), want, url);
});

test('parseOciUrl does not echo a megabyte of input', () => {
  assert.throws(
    () => parseOciUrl(`https://${'a'.repeat(1_000_000)}`),
    (err: Error) => err.message.length < 400,
  );
});

test('canonicalImageName normalises Docker Hub names and keeps others', () => {
  const cases: [string, string][] = [
    ['alpine', 'docker.io/library/alpine'],
    ['library/alpine', 'docker.io/library/alpine'],
    ['fluxcd/flux-cli', 'docker.io/fluxcd/flux-cli'],
    ['docker.io/alpine', 'docker.io/library/alpine'],
    ['index.docker.io/library/alpine', 'docker.io/library/alpine'],
    ['registry-1.docker.io/org/app', 'docker.io/org/app'],
    ['ghcr.io/x/y', 'ghcr.io/x/y'],
    ['localhost/app', 'localhost/app'],
    ['127.0.0.1:5000/app', '127.0.0.1:5000/app'],
  ];
  for (const [image, want] of cases) assert.equal(canonicalImageName(image), want, image);
});

test('canonicalImageName rejects tags, digests, schemes and bad names', () => {
  const cases: [string, RegExp][] = [
    ['alpine:3.19', /must not contain a tag/],
    ['ghcr.io/x/y:v1', /must not contain a tag/],
    ['ghcr.io/x/y@sha256:0000', /must not contain a digest/],
    ['https://ghcr.io/x/y', /must not have a scheme/],
    ['', /empty/],
    ['Alpine', /invalid repository path component/],
  ];
  for (const [image, want] of cases) assert.throws(() => canonicalImageName(image), want, image);
});

test('imageReference and apiHost send Docker Hub traffic to registry-1.docker.io', () => {
  const ref = imageReference('alpine');
  assert.deepEqual(ref, { host: 'docker.io', repository: 'library/alpine' });
  assert.equal(apiHost(ref.host), 'registry-1.docker.io');
  assert.equal(apiHost('ghcr.io'), 'ghcr.io');
});
