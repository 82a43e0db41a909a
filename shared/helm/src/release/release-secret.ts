// A release as the Secret Helm's secrets storage driver writes (pkg/storage/driver/secrets.go and
// util.go, v3.22.0): named sh.helm.release.v1.<name>.v<version>, type helm.sh/release.v1, system
// labels beside the release's own, and data.release = base64(gzip(JSON)), which the API server
// base64s once more as Secret data.
import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';
import { releaseJson } from './release-json.ts';
import { RELEASE_STATUSES, type ReleaseRecord } from './release-record.ts';

export const RELEASE_SECRET_TYPE = 'helm.sh/release.v1';

/** Labels Helm owns on the Secret; a release's own labels are the others (driver/util.go). */
export const SYSTEM_LABELS = ['name', 'owner', 'status', 'version', 'createdAt', 'modifiedAt'] as const;

/**
 * The most a record may inflate to. The Secret is tenant-writable, so a gzip bomb in it must fail
 * the read, not the operator; the largest real releases are a few MiB of JSON.
 */
export const MAX_RELEASE_JSON_BYTES = 64 << 20;

/** The most a Secret's data.release may hold before decoding (etcd caps an object at 1.5 MiB). */
export const MAX_RELEASE_DATA_BYTES = 4 << 20;

/** A release record that cannot be read or written; the message names the Secret, never its data. */
export class ReleaseRecordError extends Error {
  override name = 'ReleaseRecordError';
}

/** The Secret a release's storage record is, in the shape the Kubernetes API takes and returns. */
export interface ReleaseSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  type?: string;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** `sh.helm.release.v1.<name>.v<version>`, Helm's storage key (pkg/storage makeKey). */
export function releaseSecretName(name: string, version: number): string {
  return `sh.helm.release.v1.${name}.v${version}`;
}

/** Helm's encodeRelease: the JSON gzipped at best compression, in standard base64. */
export function encodeRelease(record: ReleaseRecord): string {
  const gz = gzipSync(Buffer.from(releaseJson(record), 'utf8'), { level: zlib.Z_BEST_COMPRESSION });
  return gz.toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function strictBase64(text: string, what: string): Buffer {
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new ReleaseRecordError(`${what} is not base64`);
  return Buffer.from(text, 'base64');
}

/**
 * Helm's decodeRelease: base64, then gunzip when the gzip magic is there (Helm reads the
 * uncompressed records of its early versions too), then JSON. `where` names the record in errors.
 */
export function decodeRelease(encoded: string, where = 'release record'): ReleaseRecord {
  let bytes = strictBase64(encoded, `${where}: data.release`);
  if (bytes.length > 3 && bytes[0] === 0x1f && bytes[1] === 0x8b && bytes[2] === 0x08) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_RELEASE_JSON_BYTES });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        throw new ReleaseRecordError(
          `${where} inflates to more than ${MAX_RELEASE_JSON_BYTES} bytes and was not read (a gzip bomb, or not a Helm release)`,
        );
      throw new ReleaseRecordError(`${where}: data.release is not valid gzip: ${(err as Error).message}`);
    }
  } else if (bytes.length > MAX_RELEASE_JSON_BYTES) {
    throw new ReleaseRecordError(`${where} is larger than ${MAX_RELEASE_JSON_BYTES} bytes and was not read`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ReleaseRecordError(`${where}: data.release is not a Helm release (its content is not JSON)`);
  }
  return checkRecord(parsed, where);
}

function checkRecord(value: unknown, where: string): ReleaseRecord {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new ReleaseRecordError(`${where}: data.release is not a Helm release (not a JSON object)`);
  const r = value as Record<string, unknown>;
  if (typeof r.name !== 'string' || !r.name)
    throw new ReleaseRecordError(`${where}: the release has no name`);
  if (typeof r.version !== 'number' || !Number.isInteger(r.version) || r.version < 1)
    throw new ReleaseRecordError(`${where}: the release has no version (a positive integer)`);
  const info = r.info;
  if (!info || typeof info !== 'object' || Array.isArray(info))
    throw new ReleaseRecordError(`${where}: the release has no info`);
  const status = (info as Record<string, unknown>).status;
  if (status !== undefined && !(RELEASE_STATUSES as readonly unknown[]).includes(status))
    throw new ReleaseRecordError(
      `${where}: unknown release status ${JSON.stringify(String(status)).slice(0, 40)}`,
    );
  for (const key of ['chart', 'config'] as const) {
    const v = r[key];
    if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v)))
      throw new ReleaseRecordError(`${where}: the release's ${key} is not an object`);
  }
  if (r.manifest !== undefined && typeof r.manifest !== 'string')
    throw new ReleaseRecordError(`${where}: the release's manifest is not text`);
  if (r.hooks !== undefined && r.hooks !== null && !Array.isArray(r.hooks))
    throw new ReleaseRecordError(`${where}: the release's hooks are not a list`);
  return value as ReleaseRecord;
}

/** When the record was written: Helm stamps `createdAt` on create and `modifiedAt` on update. */
export interface ReleaseSecretOptions {
  /** The storage namespace (Helm's `--namespace`, Flux's `storageNamespace`). */
  namespace: string;
  createdAt?: Date;
  modifiedAt?: Date;
}

/** The Secret Helm would write for `record`; pure (the time comes from `options`). */
export function encodeReleaseSecret(record: ReleaseRecord, options: ReleaseSecretOptions): ReleaseSecret {
  if (!record.name || !Number.isInteger(record.version) || record.version < 1)
    throw new ReleaseRecordError(`a release record needs a name and a positive integer version`);
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(record.labels ?? {})) {
    if (!(SYSTEM_LABELS as readonly string[]).includes(k)) labels[k] = v;
  }
  if (options.createdAt) labels.createdAt = String(Math.floor(options.createdAt.getTime() / 1000));
  if (options.modifiedAt) labels.modifiedAt = String(Math.floor(options.modifiedAt.getTime() / 1000));
  labels.name = record.name;
  labels.owner = 'helm';
  labels.status = record.info.status ?? '';
  labels.version = String(record.version);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: releaseSecretName(record.name, record.version), namespace: options.namespace, labels },
    type: RELEASE_SECRET_TYPE,
    // Secret data is base64 of the bytes; the bytes are Helm's own base64 text.
    data: { release: Buffer.from(encodeRelease(record), 'latin1').toString('base64') },
  };
}

/**
 * The release a storage Secret holds, with its own labels (the Secret's labels but Helm's system
 * ones, as Helm's driver Get returns them). Refuses, with a ReleaseRecordError naming the Secret,
 * anything but a helm.sh/release.v1 record, one above the size limits, and one whose name or
 * version disagree with the Secret's name.
 */
export function decodeReleaseSecret(secret: ReleaseSecret): ReleaseRecord {
  const where = `release record Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  if (secret.kind !== 'Secret') throw new ReleaseRecordError(`${where} is a ${secret.kind}, not a Secret`);
  if (secret.type !== RELEASE_SECRET_TYPE)
    throw new ReleaseRecordError(
      `${where} has type ${JSON.stringify(secret.type ?? '')}, not ${RELEASE_SECRET_TYPE}: it is not a Helm release`,
    );
  const data = secret.data?.release;
  if (typeof data !== 'string' || !data) throw new ReleaseRecordError(`${where} has no data.release`);
  if (data.length > MAX_RELEASE_DATA_BYTES)
    throw new ReleaseRecordError(
      `${where}: data.release is larger than ${MAX_RELEASE_DATA_BYTES} bytes and was not read`,
    );
  const helmText = strictBase64(data, `${where}: data.release`).toString('latin1');
  const record = decodeRelease(helmText, where);
  if (secret.metadata.name !== releaseSecretName(record.name, record.version))
    throw new ReleaseRecordError(
      `${where} holds release ${record.name} version ${record.version}, which Helm would store as ${releaseSecretName(record.name, record.version)}`,
    );
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.metadata.labels ?? {})) {
    if (!(SYSTEM_LABELS as readonly string[]).includes(k)) labels[k] = v;
  }
  record.labels = labels;
  return record;
}
