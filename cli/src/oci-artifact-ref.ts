import { isDigest, type OciReference, parseOciUrl } from '@mooring/oci';
import { CliError, EXIT_ERROR } from './cli-error.ts';

/** An artifact address as the artifact commands take it: `oci://host/repo[:tag][@digest]`. */
export interface ArtifactRef {
  repo: OciReference;
  tag?: string;
  digest?: string;
}

const TRAILING_DIGEST = /@((?:sha256|sha512):[a-f0-9]+)$/;
// The distribution spec's tag grammar.
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** Refuses a tag the registry would refuse, before any network call. */
export function checkTag(tag: string, flag = 'the tag'): string {
  if (!TAG.test(tag))
    throw usage(
      `${flag} '${tag.slice(0, 140)}' is not a valid tag (letters, digits, _ . -, up to 128, not starting with . or -)`,
    );
  return tag;
}

/**
 * Splits the tag and digest off an `oci://` URL and validates the rest with shared/oci's parser.
 * `tag: 'refuse'` is for commands that name a whole repository (list); a digest only where allowed.
 */
export function parseArtifactRef(
  url: string,
  opts: { tag: 'allow' | 'refuse'; digest: boolean },
): ArtifactRef {
  let rest = url;
  let digest: string | undefined;
  const at = TRAILING_DIGEST.exec(rest);
  if (at) {
    digest = at[1]!;
    rest = rest.slice(0, at.index);
    if (!isDigest(digest)) throw usage(`'${digest}' is not a sha256:<64 hex> digest`);
  }
  // Checked before the shared parser, whose message quotes the URL: userinfo may hold a password.
  if (rest.includes('@'))
    throw usage('the OCI URL must not contain credentials: pass them with --creds or MOORING_OCI_CREDS');
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/') && rest.indexOf('/', 'oci://'.length) > 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  let repo: OciReference;
  try {
    repo = parseOciUrl(rest);
  } catch (err) {
    throw usage((err as Error).message.replace(/\.$/, ''));
  }
  if (opts.tag === 'refuse' && (tag !== undefined || digest)) {
    throw usage(`give the repository without a tag or digest, as in oci://${repo.host}/${repo.repository}`);
  }
  if (tag !== undefined) checkTag(tag);
  if (!opts.digest && digest)
    throw usage(`a digest is not allowed here: give a tag, as in ${display(repo)}:v1`);
  const out: ArtifactRef = { repo };
  if (tag !== undefined) out.tag = tag;
  if (digest) out.digest = digest;
  return out;
}

/** `oci://host/repo`, how the commands name a repository in their output. */
export function display(repo: OciReference): string {
  return `oci://${repo.host}/${repo.repository}`;
}

function usage(sentence: string): CliError {
  return new CliError(`${sentence}.`, EXIT_ERROR);
}
