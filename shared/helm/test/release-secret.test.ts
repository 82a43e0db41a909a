// Release records as Helm's secrets driver stores them: a record `helm install` wrote (committed
// fixture, see testdata/release-records/SOURCE.md) decodes, and re-encodes to the very JSON Helm
// wrote; Mooring's own records round-trip; anything that is not a helm.sh/release.v1 record, and
// a gzip bomb, is refused with an error that names the Secret.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  decodeRelease,
  decodeReleaseSecret,
  encodeRelease,
  encodeReleaseSecret,
  helmTime,
  MAX_RELEASE_JSON_BYTES,
  type ReleaseRecord,
  ReleaseRecordError,
  type ReleaseSecret,
  releaseJson,
} from '../src/index.ts';

const RECORDS = join(import.meta.dirname, 'testdata/release-records');
const helmWrote = (file: string): ReleaseSecret => JSON.parse(readFileSync(join(RECORDS, file), 'utf8'));

/** The JSON inside a Secret's data.release: base64 (the API's), base64 (Helm's), gzip. */
function innerJson(secret: ReleaseSecret): string {
  const helmText = Buffer.from(secret.data?.release ?? '', 'base64').toString('latin1');
  return gunzipSync(Buffer.from(helmText, 'base64')).toString('utf8');
}

/** A Secret whose data.release holds `payload` as Helm would encode it (gzip, base64, base64). */
function secretHolding(payload: Buffer, name = 'sh.helm.release.v1.x.v1', gzip = true): ReleaseSecret {
  const helmText = (gzip ? gzipSync(payload) : payload).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: 'apps',
      labels: { owner: 'helm', name: 'x', version: '1', status: 'deployed' },
    },
    type: 'helm.sh/release.v1',
    data: { release: Buffer.from(helmText, 'latin1').toString('base64') },
  };
}

const minimal: ReleaseRecord = {
  name: 'x',
  version: 1,
  info: {
    first_deployed: '2026-01-02T03:04:05.5Z',
    last_deployed: '2026-01-02T03:04:05.5Z',
    deleted: '',
    status: 'deployed',
    description: 'Install complete',
  },
  config: { z: 1, a: { y: '<b>&' } },
  manifest: '---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
  namespace: 'apps',
};

describe('a record helm install wrote', () => {
  const secret = helmWrote('demo-v1.secret.json');

  it('decodes to the release helm ls shows', () => {
    const r = decodeReleaseSecret(secret);
    assert.equal(r.name, 'demo');
    assert.equal(r.version, 1);
    assert.equal(r.namespace, 'explore-r');
    assert.equal(r.info.status, 'deployed');
    assert.equal(r.info.description, 'Install complete');
    assert.equal(r.info.notes, 'demo says hi.\n');
    assert.deepEqual(r.config, { greeting: 'hi' });
    assert.equal(r.chart?.metadata?.name, 'hooks-chart');
    assert.equal(r.chart?.metadata?.version, '0.1.0');
    assert.equal(r.hooks?.length, 7);
    // Only the release's own labels: Helm's system labels stay on the Secret.
    assert.deepEqual(r.labels, {});
  });

  it('re-encodes to exactly the JSON Helm wrote', () => {
    assert.equal(releaseJson(decodeReleaseSecret(secret)), innerJson(secret));
    const y11 = helmWrote('y11-v1.secret.json');
    assert.equal(releaseJson(decodeReleaseSecret(y11)), innerJson(y11));
  });

  it('a copy Mooring writes carries the same labels and JSON', () => {
    const r = decodeReleaseSecret(secret);
    const modifiedAt = new Date(Number(secret.metadata.labels?.modifiedAt) * 1000);
    const ours = encodeReleaseSecret(r, { namespace: 'explore-r', modifiedAt });
    assert.deepEqual(ours.metadata, secret.metadata);
    assert.equal(ours.type, secret.type);
    assert.equal(innerJson(ours), innerJson(secret));
  });
});

describe("Mooring's records", () => {
  it('round-trip through the Secret, with the release labels kept apart from the system ones', () => {
    const record: ReleaseRecord = { ...minimal, labels: { team: 'ml', owner: 'not-me' } };
    const secret = encodeReleaseSecret(record, {
      namespace: 'storage',
      createdAt: new Date(1_700_000_000_900),
    });
    assert.equal(secret.metadata.name, 'sh.helm.release.v1.x.v1');
    assert.equal(secret.metadata.namespace, 'storage');
    assert.equal(secret.type, 'helm.sh/release.v1');
    // A release label cannot take over a system label's name.
    assert.deepEqual(secret.metadata.labels, {
      team: 'ml',
      createdAt: '1700000000',
      name: 'x',
      owner: 'helm',
      status: 'deployed',
      version: '1',
    });
    const back = decodeReleaseSecret(secret);
    assert.deepEqual(back, { ...minimal, labels: { team: 'ml' } });
  });

  it("writes Go's JSON: struct order, sorted map keys, HTML characters escaped, last_run always", () => {
    const json = releaseJson({
      ...minimal,
      hooks: [{ name: 'h', events: ['test'], last_run: { started_at: '', completed_at: '', phase: '' } }],
    });
    assert.ok(
      json.startsWith(
        '{"name":"x","info":{"first_deployed":"2026-01-02T03:04:05.5Z","last_deployed":"2026-01-02T03:04:05.5Z","deleted":"","description":"Install complete","status":"deployed"},"config":{"a":{"y":"\\u003cb\\u003e\\u0026"},"z":1},"manifest":',
      ),
      json,
    );
    assert.match(
      json,
      /"hooks":\[\{"name":"h","events":\["test"\],"last_run":\{"started_at":"","completed_at":"","phase":""\}\}\],"version":1,"namespace":"apps"\}$/,
    );
  });

  it('encodes as Helm does: gzip at best compression, then base64', () => {
    const text = encodeRelease(minimal);
    const gz = Buffer.from(text, 'base64');
    assert.deepEqual([...gz.subarray(0, 3)], [0x1f, 0x8b, 0x08]);
    assert.equal(gz[8], 2, 'gzip header says maximum compression');
    assert.deepEqual(decodeRelease(text), minimal);
  });

  it("reads Helm's early uncompressed records too", () => {
    const secret = secretHolding(Buffer.from(JSON.stringify(minimal)), undefined, false);
    assert.equal(decodeReleaseSecret(secret).manifest, minimal.manifest);
  });

  it("writes times as Helm's pkg/time does", () => {
    assert.equal(helmTime(new Date('2026-12-01T20:22:08.200Z')), '2026-12-01T20:22:08.2Z');
    assert.equal(helmTime(new Date('2026-12-01T20:22:10.000Z')), '2026-12-01T20:22:10Z');
  });
});

describe('what decode refuses', () => {
  const refuses = (secret: ReleaseSecret, message: RegExp) =>
    assert.throws(
      () => decodeReleaseSecret(secret),
      (err: unknown) => {
        assert.ok(err instanceof ReleaseRecordError, String(err));
        assert.match(err.message, message);
        assert.match(err.message, /Secret apps\/sh\.helm\.release\.v1\.x\.v1/);
        return true;
      },
    );
  const good = secretHolding(Buffer.from(JSON.stringify(minimal)));

  it('a Secret of another type', () => {
    refuses(
      { ...good, type: 'Opaque' },
      /has type "Opaque", not helm\.sh\/release\.v1: it is not a Helm release/,
    );
  });

  it('a Secret without data.release, or with data that is not base64, gzip or JSON', () => {
    refuses({ ...good, data: {} }, /has no data\.release/);
    refuses({ ...good, data: { release: 'not base64!' } }, /data\.release is not base64/);
    refuses(
      secretHolding(Buffer.from('{"name": "x", "version": 1, "info": {'), undefined, true),
      /is not a Helm release \(its content is not JSON\)/,
    );
    const truncated = gzipSync(Buffer.from(JSON.stringify(minimal))).subarray(0, 20);
    refuses(
      { ...good, data: { release: Buffer.from(truncated.toString('base64')).toString('base64') } },
      /not valid gzip/,
    );
  });

  it('JSON that is not a release', () => {
    refuses(secretHolding(Buffer.from('[1, 2]')), /not a JSON object/);
    refuses(secretHolding(Buffer.from('{"version": 1, "info": {}}')), /has no name/);
    refuses(secretHolding(Buffer.from('{"name": "x", "version": 0, "info": {}}')), /has no version/);
    refuses(
      secretHolding(Buffer.from('{"name": "x", "version": 1, "info": {"status": "melting"}}')),
      /unknown release status "melting"/,
    );
  });

  it('a record whose name or version is not the one its Secret is named for', () => {
    refuses(
      secretHolding(Buffer.from(JSON.stringify({ ...minimal, version: 7 }))),
      /holds release x version 7, which Helm would store as sh\.helm\.release\.v1\.x\.v7/,
    );
  });

  it('a gzip bomb: the inflated size is capped, and the operator keeps running', () => {
    // 80 MiB of one character gzips to about 80 KiB: small enough for a Secret.
    const bomb = secretHolding(Buffer.alloc(80 << 20, 0x20));
    assert.ok((bomb.data?.release?.length ?? 0) < 1 << 20);
    refuses(bomb, new RegExp(`inflates to more than ${MAX_RELEASE_JSON_BYTES} bytes and was not read`));
    // The refusal is an error like any other: the next record decodes.
    assert.equal(decodeReleaseSecret(good).name, 'x');
  });
});
