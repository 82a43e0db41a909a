import { IMAGE_GROUP, KINDS, type KindDefinition, SOURCE_GROUP, SOURCE_KINDS } from '@mooring/api';
import { CliError, EXIT_ERROR } from './cli-error.ts';

/** Words users type for each kind (Flux's `source git`, kubectl's plurals and short names). */
const PHRASES: Record<string, string[]> = {
  GitRepository: ['source git', 'sources git'],
  OCIRepository: ['source oci', 'sources oci'],
  HelmRepository: ['source helm', 'sources helm'],
  HelmChart: ['source chart', 'sources chart'],
  Kustomization: [],
  HelmRelease: [],
  Provider: ['alert-provider', 'alert-providers'],
  Alert: [],
  Receiver: [],
  ImageRepository: ['image repository', 'images repository', 'image repositories'],
  ImagePolicy: ['image policy', 'images policy', 'image policies'],
  ImageUpdateAutomation: ['image update', 'images update', 'image updates'],
};

/** What a Kustomization reads (`--source`). */
const SOURCES: readonly string[] = SOURCE_KINDS;
/** Flux's `get sources`: every kind of the source group, Helm repositories and charts included. */
const SOURCE_GROUP_KINDS = KINDS.filter((k) => k.group === SOURCE_GROUP).map((k) => k.kind);
const IMAGES = KINDS.filter((k) => k.group === IMAGE_GROUP).map((k) => k.kind);

/** Groups of kinds `get`, `export` and `stats` accept besides single kinds (Flux's `sources`, `images`). */
export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  sources: SOURCE_GROUP_KINDS,
  source: SOURCE_GROUP_KINDS,
  images: IMAGES,
  image: IMAGES,
  all: KINDS.map((k) => k.kind),
};

function names(def: KindDefinition): string[] {
  return [def.kind.toLowerCase(), def.singular, def.plural, ...def.shortNames, ...(PHRASES[def.kind] ?? [])];
}

/** How a command's leading words named one or more kinds, and the words left over. */
export interface KindMatch {
  kinds: KindDefinition[];
  rest: string[];
}

/** Reads a kind (two words first, e.g. `source git`) or, when `allowGroups`, a group from `words`. */
export function matchKinds(words: string[], allowGroups: boolean): KindMatch | undefined {
  for (const take of [2, 1]) {
    if (words.length < take) continue;
    const phrase = words.slice(0, take).join(' ').toLowerCase();
    const def = KINDS.find((k) => names(k).includes(phrase));
    if (def) return { kinds: [def], rest: words.slice(take) };
    const group = allowGroups && take === 1 ? GROUPS[phrase] : undefined;
    if (group) {
      return { kinds: group.map((k) => KINDS.find((d) => d.kind === k)!), rest: words.slice(take) };
    }
  }
  return undefined;
}

/** Like matchKinds, but a usage error names what is accepted. */
export function requireKinds(words: string[], allowGroups: boolean): KindMatch {
  const match = matchKinds(words, allowGroups);
  if (match) return match;
  const accepted = KINDS.map((k) => k.singular).join(', ');
  throw new CliError(
    `'${words.join(' ') || '(nothing)'}' is not a Mooring kind: use one of ${accepted}${allowGroups ? ', sources, images, all' : ''}.`,
    2,
  );
}

/** `<group>/<version>` of a kind. */
export function apiVersionOf(def: KindDefinition): string {
  return `${def.group}/${def.version}`;
}

/** A source a Kustomization reads, as `spec.sourceRef` holds it. */
export interface SourceReference {
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * `--source [Kind/][namespace/]name` as Flux takes it: the kind in any case, or as kubectl
 * shortens it (`gitrepository`, `Gitrepo`, `ocirepo`), GitRepository when left out. A kind a
 * Kustomization cannot read is a usage error naming those it can, before anything is sent.
 */
export function parseSourceRef(value: string, flag = '--source'): SourceReference {
  const parts = value.split('/');
  if (parts.length > 3 || parts.some((p) => !p))
    throw new CliError(
      `${flag} '${value}' is not [Kind/][namespace/]name: write it as ${flag} GitRepository/my-repo.`,
      EXIT_ERROR,
    );
  if (parts.length === 1) return { kind: 'GitRepository', name: parts[0]! };
  const [word, a, b] = parts as [string, string, string | undefined];
  const sources = KINDS.filter((k) => SOURCES.includes(k.kind));
  const def = sources.find((k) =>
    [k.kind.toLowerCase(), k.singular, k.plural, ...k.shortNames].includes(word.toLowerCase()),
  );
  if (!def)
    throw new CliError(
      `${flag} kind '${word}' is not a source a Kustomization can read: use ${SOURCES.join(' or ')}, e.g. ${flag} GitRepository/${b ?? a}.`,
      EXIT_ERROR,
    );
  return b === undefined ? { kind: def.kind, name: a } : { kind: def.kind, namespace: a, name: b };
}
