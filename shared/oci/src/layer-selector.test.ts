import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectLayer } from './layer-selector.ts';
import { MediaTypes, type OciManifest } from './manifest.ts';

const layer = (mediaType: string, c: string) => ({ mediaType, digest: `sha256:${c.repeat(64)}`, size: 1 });
const manifest = (layers: OciManifest['layers']): OciManifest => ({
  schemaVersion: 2,
  mediaType: MediaTypes.ociManifest,
  config: layer(MediaTypes.fluxConfig, '0'),
  layers,
  annotations: {},
});

test('selects the first layer, or the first of a media type', () => {
  const m = manifest([
    layer('application/x-a', 'a'),
    layer(MediaTypes.fluxContent, 'b'),
    layer(MediaTypes.fluxContent, 'c'),
  ]);
  assert.equal(selectLayer(m).digest, `sha256:${'a'.repeat(64)}`);
  assert.equal(selectLayer(m, MediaTypes.fluxContent).digest, `sha256:${'b'.repeat(64)}`);
});

test('no matching layer is a clear error', () => {
  assert.throws(() => selectLayer(manifest([])), /has no layers/);
  assert.throws(
    () => selectLayer(manifest([layer('application/x-a', 'a')]), 'application/x-b'),
    /no layer with media type "application\/x-b" \(it has application\/x-a\)/,
  );
});
