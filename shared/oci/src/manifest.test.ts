import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RegistryProtocolError } from './errors.ts';
import { MediaTypes, parseManifest } from './manifest.ts';

const d = (c: string) => `sha256:${c.repeat(64)}`;
const good = {
  schemaVersion: 2,
  mediaType: MediaTypes.ociManifest,
  config: { mediaType: MediaTypes.fluxConfig, digest: d('a'), size: 2 },
  layers: [{ mediaType: MediaTypes.fluxContent, digest: d('b'), size: 10, annotations: { t: 'x' } }],
  annotations: { 'org.opencontainers.image.revision': 'r' },
};
const parse = (doc: unknown, contentType?: string) =>
  parseManifest(Buffer.from(JSON.stringify(doc)), contentType, 'x');

test('parses an OCI manifest and a Docker v2 schema 2 manifest', () => {
  const m = parse(good);
  assert.equal(m.config.digest, d('a'));
  assert.deepEqual(m.layers[0]?.annotations, { t: 'x' });
  assert.deepEqual(m.annotations, { 'org.opencontainers.image.revision': 'r' });
  const docker = parse({ ...good, mediaType: undefined, annotations: undefined }, MediaTypes.dockerManifest);
  assert.equal(docker.mediaType, MediaTypes.dockerManifest);
  assert.deepEqual(docker.annotations, {});
});

test('rejects indexes, other schemas and missing or mistyped fields', () => {
  const cases: [unknown, string | undefined, RegExp][] = [
    [{ schemaVersion: 2, mediaType: MediaTypes.ociIndex, manifests: [] }, undefined, /image index/],
    [{ schemaVersion: 2, manifests: [] }, MediaTypes.dockerManifestList, /image index/],
    [{ schemaVersion: 2, manifests: [] }, MediaTypes.ociManifest, /image index/],
    [{ ...good, schemaVersion: 1 }, undefined, /schemaVersion 1/],
    [{ ...good, mediaType: 'text/plain' }, undefined, /unsupported media type "text\/plain"/],
    [{ ...good, config: undefined }, undefined, /config is missing/],
    [{ ...good, layers: 'x' }, undefined, /no layers array/],
    [
      { ...good, layers: [{ ...good.config, size: '2' }] },
      undefined,
      /layer 0 has a missing or invalid size/,
    ],
    [
      { ...good, layers: [{ ...good.config, digest: 'sha256:zz' }] },
      undefined,
      /layer 0 has a missing or unsupported digest/,
    ],
    [{ ...good, annotations: { a: 1 } }, undefined, /annotation "a" that is not a string/],
    [[1, 2], undefined, /not a JSON object/],
    [null, undefined, /not a JSON object/],
  ];
  for (const [doc, ct, want] of cases) {
    assert.throws(
      () => parse(doc, ct),
      (err: Error) => err instanceof RegistryProtocolError && want.test(err.message),
      JSON.stringify(doc),
    );
  }
  assert.throws(() => parseManifest(Buffer.from('{oops'), undefined, 'x'), /not valid JSON/);
});
