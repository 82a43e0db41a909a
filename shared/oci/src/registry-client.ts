import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type http from 'node:http';
import { basename, dirname, join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Authenticator } from './auth.ts';
import { digestLike, hasherFor, isDigest, parseDigest, sha256Digest } from './digest.ts';
import type { RegistryCredentials } from './docker-config.ts';
import {
  ContentTooLargeError,
  DigestMismatchError,
  LocalWriteError,
  RegistryAuthError,
  RegistryError,
  RegistryNotFoundError,
  RegistryProtocolError,
  RegistryUnavailableError,
} from './errors.ts';
import { networkError, readBody, readErrorBody, sendRequest } from './http.ts';
import { nextLink } from './link-header.ts';
import {
  MANIFEST_ACCEPT,
  MediaTypes,
  type OciDescriptor,
  type OciManifest,
  parseManifest,
} from './manifest.ts';
import { apiHost, type OciReference } from './reference.ts';

/** How to reach and authenticate to registries. `timeoutMs` bounds each whole operation. */
export interface RegistryClientOptions {
  /** Plain HTTP instead of HTTPS. */
  insecure?: boolean;
  /** PEM CA certificate(s) trusted for HTTPS in addition to the system roots (certSecretRef `ca.crt`). */
  caCert?: string;
  /** PEM client certificate and key for mutual TLS (certSecretRef `tls.crt` / `tls.key`). */
  clientCert?: string;
  clientKey?: string;
  credentials?: RegistryCredentials;
  timeoutMs: number;
  signal?: AbortSignal;
  userAgent?: string;
}

/** What `push` uploads: a config blob, layers, and manifest-level fields. */
export interface PushArtifact {
  config: { mediaType: string; data: Buffer };
  layers: { mediaType: string; data: Buffer; annotations?: Record<string, string> }[];
  annotations?: Record<string, string>;
  artifactType?: string;
}

/** A resolved manifest: its digest (verified against the bytes), media type and content. */
export interface ResolvedManifest {
  digest: string;
  mediaType: string;
  manifest: OciManifest;
  annotations: Record<string, string>;
}

/** Manifests above this are refused: real ones are kilobytes, and the body is held in memory. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_TAG_PAGE_BYTES = 4 * 1024 * 1024;
const MAX_TAG_PAGES = 1000;
const DEFAULT_MAX_TAGS = 100_000;
const MAX_REDIRECTS = 5;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const LOCAL_SYSCALLS = new Set(['open', 'write', 'close', 'rename', 'fsync']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Actions = 'pull' | 'pull,push';

interface RequestInit {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT';
  url: URL;
  actions: Actions;
  headers?: Record<string, string>;
  body?: Buffer;
}

function checkTag(tag: string, ref: OciReference): void {
  if (!TAG.test(tag)) {
    throw new RegistryProtocolError(
      `tag ${JSON.stringify(tag.slice(0, 140))} for ${ref.host}/${ref.repository} is not a valid tag.`,
    );
  }
}

/** Counts and hashes a blob while it streams; fails as soon as it is longer than declared. */
class BlobVerifier extends Transform {
  readonly #hash;
  readonly #descriptor: { digest: string; size: number };
  readonly #what: string;
  #bytes = 0;

  constructor(descriptor: { digest: string; size: number }, what: string) {
    super();
    this.#hash = hasherFor(descriptor.digest);
    this.#descriptor = descriptor;
    this.#what = what;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#descriptor.size) {
      done(
        new DigestMismatchError(
          `${this.#what} is longer than the ${this.#descriptor.size} bytes its descriptor declares.`,
        ),
      );
      return;
    }
    this.#hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.#bytes !== this.#descriptor.size) {
      done(
        new DigestMismatchError(
          `${this.#what} is ${this.#bytes} bytes, but its descriptor declares ${this.#descriptor.size}.`,
        ),
      );
      return;
    }
    const { algorithm } = parseDigest(this.#descriptor.digest);
    const actual = `${algorithm}:${this.#hash.digest('hex')}`;
    if (actual !== this.#descriptor.digest) {
      done(new DigestMismatchError(`${this.#what} hashes to ${actual}, not to its digest.`));
      return;
    }
    done();
  }
}

/**
 * A client for the OCI distribution API: list tags, resolve manifests and digests, download verified
 * blobs and push artifacts. Auth per the distribution spec (anonymous first, then Basic or Bearer
 * from the 401 challenge). Every failure is a RegistryError subclass with a one-sentence message that
 * names the registry and never contains a secret.
 */
export class RegistryClient {
  readonly #options: RegistryClientOptions;
  readonly #auth: Authenticator;

  constructor(options: RegistryClientOptions) {
    this.#options = options;
    this.#auth = new Authenticator(options.credentials, options.insecure === true);
  }

  #base(ref: OciReference): URL {
    return new URL(`${this.#options.insecure ? 'http' : 'https'}://${apiHost(ref.host)}`);
  }

  #url(ref: OciReference, path: string): URL {
    return new URL(`/v2/${ref.repository}/${path}`, this.#base(ref));
  }

  /** Runs one operation under the timeout and maps transport failures to RegistryErrors. */
  async #operation<T>(ref: OciReference, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    // Not AbortSignal.timeout: inside AbortSignal.any, Node 20 lets it be collected with its timer,
    // and the operation then never times out. This timer holds its controller until cleared.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      this.#options.timeoutMs,
    );
    const signal = this.#options.signal
      ? AbortSignal.any([this.#options.signal, timeout.signal])
      : timeout.signal;
    try {
      return await fn(signal);
    } catch (err) {
      if (err instanceof RegistryError || err instanceof LocalWriteError) throw err;
      throw networkError(err, { host: ref.host, url: this.#base(ref), signal }, this.#options.timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  #send(
    ref: OciReference,
    signal: AbortSignal,
    init: { method: RequestInit['method']; url: URL; headers: Record<string, string>; body?: Buffer },
  ): Promise<http.IncomingMessage> {
    const headers = { 'User-Agent': this.#options.userAgent ?? 'mooring', ...init.headers };
    const { caCert, clientCert, clientKey } = this.#options;
    return sendRequest({ ...init, headers, host: ref.host, signal, tls: { caCert, clientCert, clientKey } });
  }

  /** One registry request with auth (answering one 401 challenge) and same-method redirects. */
  async #request(ref: OciReference, signal: AbortSignal, init: RequestInit): Promise<http.IncomingMessage> {
    const origin = this.#base(ref).origin;
    const scope = `repository:${ref.repository}:${init.actions}`;
    let auth = this.#auth.cached(ref.host, scope);
    let answered = false;
    let url = init.url;
    let method = init.method;
    for (let hop = 0; hop <= MAX_REDIRECTS; ) {
      const headers: Record<string, string> = { ...init.headers };
      // Credentials only go to the registry itself, never to a redirect target such as blob storage.
      const sameOrigin = url.origin === origin;
      if (auth && sameOrigin) headers.Authorization = auth;
      const res = await this.#send(ref, signal, {
        method,
        url,
        headers,
        ...(init.body && method === init.method ? { body: init.body } : {}),
      });
      const status = res.statusCode ?? 0;
      if (status === 401 && sameOrigin) {
        const challenge = res.headers['www-authenticate'];
        await readErrorBody(res);
        this.#auth.forget(ref.host, scope);
        if (answered) {
          throw new RegistryAuthError(
            this.#options.credentials
              ? `registry ${ref.host} rejected the credentials for ${init.actions} access to ${ref.repository}.`
              : `registry ${ref.host} requires authentication for ${ref.repository} and no credentials were given.`,
          );
        }
        auth = await this.#auth.answer(ref.host, scope, challenge, (tokenInit) =>
          this.#send(ref, signal, tokenInit),
        );
        answered = true;
        continue;
      }
      if (REDIRECTS.has(status) && (method === 'GET' || method === 'HEAD')) {
        const location = res.headers.location;
        await readErrorBody(res);
        if (!location)
          throw new RegistryProtocolError(`registry ${ref.host} sent a redirect without a Location.`);
        url = new URL(location, url);
        if (url.protocol !== 'https:' && url.protocol !== 'http:') {
          throw new RegistryProtocolError(`registry ${ref.host} redirected to a URL that is not http(s).`);
        }
        if (status === 303) method = 'GET';
        hop++;
        continue;
      }
      return res;
    }
    throw new RegistryProtocolError(`registry ${ref.host} redirected more than ${MAX_REDIRECTS} times.`);
  }

  /** Turns an unexpected status into the matching RegistryError (only the registry's error code is quoted). */
  async #statusError(res: http.IncomingMessage, ref: OciReference, what: string): Promise<RegistryError> {
    const status = res.statusCode ?? 0;
    const body = await readErrorBody(res);
    let code = '';
    try {
      const first = (JSON.parse(body) as { errors?: { code?: unknown }[] }).errors?.[0]?.code;
      // Only a bare error code: a hostile registry could echo our Authorization header in a message.
      if (typeof first === 'string' && /^[A-Z_]{1,64}$/.test(first)) code = ` (${first})`;
    } catch {
      // not a distribution error body
    }
    const at = `${ref.host}/${ref.repository}`;
    if (status === 404) return new RegistryNotFoundError(`${what} was not found in ${at}${code}.`);
    if (status === 401 || status === 403) {
      return new RegistryAuthError(
        `registry ${ref.host} denied access to ${what} in ${ref.repository}${code}.`,
      );
    }
    if (status === 429)
      return new RegistryUnavailableError(`registry ${ref.host} is rate limiting requests (HTTP 429).`);
    if (status >= 500) {
      return new RegistryUnavailableError(
        `registry ${ref.host} failed with HTTP ${status} on ${what}${code}.`,
      );
    }
    return new RegistryProtocolError(
      `registry ${ref.host} answered HTTP ${status} on ${what} in ${at}${code}.`,
    );
  }

  /** Every tag of the repository, following `Link: <…>; rel="next"` pagination. */
  listTags(ref: OciReference, opts: { maxTags?: number; pageSize?: number } = {}): Promise<string[]> {
    return this.#operation(ref, async (signal) => {
      const maxTags = opts.maxTags ?? DEFAULT_MAX_TAGS;
      const at = `${ref.host}/${ref.repository}`;
      let url = this.#url(ref, `tags/list?n=${opts.pageSize ?? 1000}`);
      const origin = url.origin;
      const visited = new Set<string>();
      const tags = new Set<string>();
      for (let page = 0; ; page++) {
        if (page >= MAX_TAG_PAGES) {
          throw new ContentTooLargeError(`the tag list of ${at} has more than ${MAX_TAG_PAGES} pages.`);
        }
        visited.add(url.href);
        const res = await this.#request(ref, signal, {
          method: 'GET',
          url,
          actions: 'pull',
          headers: { Accept: 'application/json' },
        });
        if (res.statusCode !== 200) throw await this.#statusError(res, ref, 'the tag list');
        const body = await readBody(res, MAX_TAG_PAGE_BYTES, `a tag list page of ${at}`);
        let doc: unknown;
        try {
          doc = JSON.parse(body.toString('utf8'));
        } catch {
          throw new RegistryProtocolError(`the tag list of ${at} is not valid JSON.`);
        }
        const list = (doc as { tags?: unknown } | null)?.tags;
        if (list !== null && list !== undefined && !Array.isArray(list)) {
          throw new RegistryProtocolError(`the tag list of ${at} has "tags" that is not an array.`);
        }
        for (const tag of list ?? []) {
          if (typeof tag !== 'string')
            throw new RegistryProtocolError(`the tag list of ${at} has a tag that is not a string.`);
          tags.add(tag);
        }
        if (tags.size > maxTags) throw new ContentTooLargeError(`${at} has more than ${maxTags} tags.`);
        const next = nextLink(res.headers.link);
        if (!next) return [...tags];
        url = new URL(next, url);
        if (url.origin !== origin) {
          throw new RegistryProtocolError(`the tag list of ${at} links to another host (${url.host}).`);
        }
        if (visited.has(url.href))
          throw new RegistryProtocolError(`the tag list of ${at} links back to a page it already sent.`);
      }
    });
  }

  /**
   * Fetches and validates the manifest of a tag or digest. The bytes must hash to the requested
   * digest and to the registry's Docker-Content-Digest, else DigestMismatchError.
   */
  resolveManifest(ref: OciReference, tagOrDigest: string): Promise<ResolvedManifest> {
    return this.#operation(ref, async (signal) => {
      const { digest, manifest } = await this.#getManifest(ref, signal, tagOrDigest);
      return { digest, mediaType: manifest.mediaType, manifest, annotations: manifest.annotations };
    });
  }

  /**
   * Points `tag` at the manifest that `from` (a tag or digest) names, by uploading its exact bytes
   * again: the digest stays the same and no blob moves. Returns that digest.
   */
  tagManifest(ref: OciReference, from: string, tag: string): Promise<{ digest: string }> {
    return this.#operation(ref, async (signal) => {
      checkTag(tag, ref);
      const { digest, body, manifest } = await this.#getManifest(ref, signal, from);
      await this.#putManifest(ref, signal, tag, body, manifest.mediaType);
      return { digest };
    });
  }

  /** GETs a manifest, verifies its bytes against the requested and advertised digests, and parses it. */
  async #getManifest(
    ref: OciReference,
    signal: AbortSignal,
    tagOrDigest: string,
  ): Promise<{ digest: string; body: Buffer; manifest: OciManifest }> {
    const byDigest = isDigest(tagOrDigest);
    if (!byDigest) checkTag(tagOrDigest, ref);
    const what = `${ref.host}/${ref.repository}${byDigest ? '@' : ':'}${tagOrDigest}`;
    const res = await this.#request(ref, signal, {
      method: 'GET',
      url: this.#url(ref, `manifests/${tagOrDigest}`),
      actions: 'pull',
      headers: { Accept: MANIFEST_ACCEPT },
    });
    if (res.statusCode !== 200) throw await this.#statusError(res, ref, `manifest ${tagOrDigest}`);
    const body = await readBody(res, MAX_MANIFEST_BYTES, `the manifest of ${what}`);
    const header = headerDigest(res, ref);
    if (header && digestLike(header, body) !== header) {
      throw new DigestMismatchError(
        `the manifest of ${what} does not hash to the Docker-Content-Digest ${header}.`,
      );
    }
    if (byDigest && digestLike(tagOrDigest, body) !== tagOrDigest) {
      throw new DigestMismatchError(`the manifest of ${what} does not hash to the requested digest.`);
    }
    const manifest = parseManifest(body, res.headers['content-type'], what);
    const digest = byDigest ? tagOrDigest : (header ?? sha256Digest(body));
    return { digest, body, manifest };
  }

  /** The digest a tag points at (any manifest kind, indexes included), by HEAD where the registry allows. */
  headDigest(ref: OciReference, tag: string): Promise<string> {
    return this.#operation(ref, async (signal) => {
      checkTag(tag, ref);
      const url = this.#url(ref, `manifests/${tag}`);
      const head = await this.#request(ref, signal, {
        method: 'HEAD',
        url,
        actions: 'pull',
        headers: { Accept: MANIFEST_ACCEPT },
      });
      head.resume();
      if (head.statusCode !== 200) throw await this.#statusError(head, ref, `manifest ${tag}`);
      const header = headerDigest(head, ref);
      if (header) return header;
      // No digest header (some registries): hash the manifest bytes instead.
      const res = await this.#request(ref, signal, {
        method: 'GET',
        url,
        actions: 'pull',
        headers: { Accept: MANIFEST_ACCEPT },
      });
      if (res.statusCode !== 200) throw await this.#statusError(res, ref, `manifest ${tag}`);
      return sha256Digest(
        await readBody(res, MAX_MANIFEST_BYTES, `the manifest of ${ref.host}/${ref.repository}:${tag}`),
      );
    });
  }

  /**
   * Streams a blob to `toFile`, checking size and digest on the way; the file appears (atomically)
   * only when both match. On any failure nothing is left behind.
   */
  fetchBlob(
    ref: OciReference,
    descriptor: { digest: string; size: number },
    toFile: string,
    opts: { maxBytes?: number } = {},
  ): Promise<void> {
    return this.#operation(ref, async (signal) => {
      parseDigest(descriptor.digest);
      const what = `blob ${descriptor.digest} of ${ref.host}/${ref.repository}`;
      if (!Number.isSafeInteger(descriptor.size) || descriptor.size < 0) {
        throw new RegistryProtocolError(`${what} has an invalid size.`);
      }
      if (opts.maxBytes !== undefined && descriptor.size > opts.maxBytes) {
        throw new ContentTooLargeError(
          `${what} is ${descriptor.size} bytes, over the limit of ${opts.maxBytes}.`,
        );
      }
      const res = await this.#request(ref, signal, {
        method: 'GET',
        url: this.#url(ref, `blobs/${descriptor.digest}`),
        actions: 'pull',
      });
      if (res.statusCode !== 200) throw await this.#statusError(res, ref, `blob ${descriptor.digest}`);
      const declared = res.headers['content-length'];
      if (declared !== undefined && Number(declared) !== descriptor.size) {
        res.destroy();
        throw new DigestMismatchError(
          `${what} is served as ${declared} bytes, but its descriptor declares ${descriptor.size}.`,
        );
      }
      const partial = join(dirname(toFile), `.${basename(toFile)}.${randomUUID()}.partial`);
      const file = createWriteStream(partial, { mode: 0o600 });
      try {
        await pipeline(res, new BlobVerifier(descriptor, what), file, { signal });
        await rename(partial, toFile);
      } catch (err) {
        await rm(partial, { force: true });
        // A local disk problem is not the registry's fault: say so instead of blaming the network.
        const e = err as NodeJS.ErrnoException;
        if (!(err instanceof RegistryError) && LOCAL_SYSCALLS.has(e.syscall ?? '')) {
          throw new LocalWriteError(`writing ${what} to ${toFile} failed (${e.code ?? 'error'}).`, {
            cause: err,
          });
        }
        throw err;
      }
    });
  }

  /** Uploads the blobs (skipping those present) and the OCI manifest under `tag`; returns the manifest digest. */
  push(ref: OciReference, tag: string, artifact: PushArtifact): Promise<{ digest: string }> {
    return this.#operation(ref, async (signal) => {
      checkTag(tag, ref);
      const config: OciDescriptor = {
        mediaType: artifact.config.mediaType,
        digest: sha256Digest(artifact.config.data),
        size: artifact.config.data.length,
      };
      await this.#uploadBlob(ref, signal, artifact.config.data, config.digest);
      const layers: OciDescriptor[] = [];
      for (const layer of artifact.layers) {
        const descriptor: OciDescriptor = {
          mediaType: layer.mediaType,
          digest: sha256Digest(layer.data),
          size: layer.data.length,
        };
        if (layer.annotations && Object.keys(layer.annotations).length > 0)
          descriptor.annotations = layer.annotations;
        await this.#uploadBlob(ref, signal, layer.data, descriptor.digest);
        layers.push(descriptor);
      }
      const manifest: Record<string, unknown> = { schemaVersion: 2, mediaType: MediaTypes.ociManifest };
      if (artifact.artifactType) manifest.artifactType = artifact.artifactType;
      manifest.config = config;
      manifest.layers = layers;
      if (artifact.annotations && Object.keys(artifact.annotations).length > 0)
        manifest.annotations = artifact.annotations;
      const bytes = Buffer.from(JSON.stringify(manifest));
      const digest = sha256Digest(bytes);
      await this.#putManifest(ref, signal, tag, bytes, MediaTypes.ociManifest);
      return { digest };
    });
  }

  /** PUTs manifest bytes under `tag` and checks the registry stored them under their own digest. */
  async #putManifest(
    ref: OciReference,
    signal: AbortSignal,
    tag: string,
    bytes: Buffer,
    mediaType: string,
  ): Promise<void> {
    const res = await this.#request(ref, signal, {
      method: 'PUT',
      url: this.#url(ref, `manifests/${tag}`),
      actions: 'pull,push',
      headers: { 'Content-Type': mediaType },
      body: bytes,
    });
    if (res.statusCode !== 201 && res.statusCode !== 200)
      throw await this.#statusError(res, ref, `manifest ${tag}`);
    res.resume();
    const stored = headerDigest(res, ref);
    if (stored && digestLike(stored, bytes) !== stored) {
      throw new DigestMismatchError(
        `registry ${ref.host} stored the manifest of ${tag} under another digest.`,
      );
    }
  }

  /** Monolithic upload: POST for an upload URL, then PUT the bytes with `?digest=`. */
  async #uploadBlob(ref: OciReference, signal: AbortSignal, data: Buffer, digest: string): Promise<void> {
    const head = await this.#request(ref, signal, {
      method: 'HEAD',
      url: this.#url(ref, `blobs/${digest}`),
      actions: 'pull,push',
    });
    head.resume();
    if (head.statusCode === 200) return;
    const start = await this.#request(ref, signal, {
      method: 'POST',
      url: this.#url(ref, 'blobs/uploads/'),
      actions: 'pull,push',
    });
    if (start.statusCode !== 202) throw await this.#statusError(start, ref, 'a blob upload');
    start.resume();
    const location = start.headers.location;
    if (!location)
      throw new RegistryProtocolError(`registry ${ref.host} started an upload without a Location.`);
    const url = new URL(location, this.#url(ref, 'blobs/uploads/'));
    if (url.origin !== this.#base(ref).origin) {
      throw new RegistryProtocolError(
        `registry ${ref.host} sent an upload Location on another host (${url.host}).`,
      );
    }
    url.searchParams.set('digest', digest);
    const put = await this.#request(ref, signal, {
      method: 'PUT',
      url,
      actions: 'pull,push',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: data,
    });
    if (put.statusCode !== 201) throw await this.#statusError(put, ref, `blob ${digest}`);
    put.resume();
  }
}

/** The validated Docker-Content-Digest header, if any. */
function headerDigest(res: http.IncomingMessage, ref: OciReference): string | undefined {
  const value = res.headers['docker-content-digest'];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !isDigest(value)) {
    throw new RegistryProtocolError(`registry ${ref.host} sent an invalid Docker-Content-Digest header.`);
  }
  return value;
}
