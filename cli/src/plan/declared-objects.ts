// The Mooring (and Flux) objects a repository declares in its YAML files: the Kustomizations and
// HelmReleases to plan and the GitRepositories that say which of them read this repository.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { DeclaredGitRepository } from './repo-match.ts';

type Doc = Record<string, unknown> & {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  spec?: Record<string, unknown>;
};

/** One applier object as written in Git, with the file that declares it. */
export interface DeclaredApplier {
  kind: 'Kustomization' | 'HelmRelease';
  namespace: string;
  name: string;
  /** Path of the declaring file from the repository root. */
  file: string;
  /** The object as parsed (Mooring's or Flux's group). */
  object: Doc & { metadata: { name: string; namespace: string }; spec: Record<string, unknown> };
}

export interface DeclaredObjects {
  appliers: DeclaredApplier[];
  gitRepositories: DeclaredGitRepository[];
  /** Files that are not valid YAML, which a plan reports instead of guessing what they declare. */
  unreadable: { file: string; error: string }[];
}

const GROUPS: Record<string, readonly string[]> = {
  Kustomization: ['kustomize.mooring.dev', 'kustomize.toolkit.fluxcd.io'],
  HelmRelease: ['helm.mooring.dev', 'helm.toolkit.fluxcd.io'],
  GitRepository: ['source.mooring.dev', 'source.toolkit.fluxcd.io'],
};

const SKIP_DIRS = new Set(['.git', 'node_modules']);
const MAX_YAML_BYTES = 4 * 1024 * 1024;

function groupOf(apiVersion: unknown): string {
  return typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** Every `.yaml`/`.yml` file under `root`, as paths from it; symlinks are not followed. */
function yamlFiles(root: string, dir = '', out: string[] = []): string[] {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir ? posix.join(dir, entry.name) : entry.name;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yamlFiles(root, rel, out);
    } else if (entry.isFile() && /\.ya?ml$/i.test(entry.name)) out.push(rel);
  }
  return out;
}

/** Reads every declared Kustomization, HelmRelease and GitRepository in the tree at `root`. */
export function declaredObjects(root: string): DeclaredObjects {
  const result: DeclaredObjects = { appliers: [], gitRepositories: [], unreadable: [] };
  for (const file of yamlFiles(root).sort()) {
    const text = readFileSync(join(root, file));
    if (text.length > MAX_YAML_BYTES) continue;
    // Cheap filter: a file that names none of the groups declares nothing of interest.
    const source = text.toString('utf8');
    if (!/mooring\.dev|toolkit\.fluxcd\.io/.test(source)) continue;
    const docs = parseAllDocuments(source, { uniqueKeys: false });
    const list = Array.isArray(docs) ? docs : [docs];
    for (const doc of list) {
      if (doc.errors.length) {
        result.unreadable.push({ file, error: doc.errors[0]!.message.split('\n')[0]! });
        continue;
      }
      const obj = doc.toJS({ maxAliasCount: 100 }) as Doc | null;
      if (!obj || typeof obj !== 'object' || typeof obj.kind !== 'string') continue;
      const group = groupOf(obj.apiVersion);
      if (!GROUPS[obj.kind]?.includes(group)) continue;
      const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
      if (!name) continue;
      const namespace = typeof obj.metadata?.namespace === 'string' ? obj.metadata.namespace : 'default';
      const spec = obj.spec && typeof obj.spec === 'object' ? obj.spec : {};
      if (obj.kind === 'GitRepository') {
        result.gitRepositories.push({
          namespace,
          name,
          url: typeof spec.url === 'string' ? spec.url : undefined,
        });
        continue;
      }
      result.appliers.push({
        kind: obj.kind as DeclaredApplier['kind'],
        namespace,
        name,
        file,
        object: { ...obj, metadata: { ...obj.metadata, name, namespace }, spec },
      });
    }
  }
  return result;
}

/** Where an applier reads its files from: its sourceRef, the namespace defaulted to its own. */
export function sourceOf(a: DeclaredApplier): { kind: string; namespace: string; name: string } | undefined {
  const spec = a.object.spec;
  const ref = (
    a.kind === 'Kustomization'
      ? spec.sourceRef
      : ((spec.chart as { spec?: { sourceRef?: unknown } } | undefined)?.spec?.sourceRef ?? spec.chartRef)
  ) as { kind?: unknown; name?: unknown; namespace?: unknown } | undefined;
  if (!ref || typeof ref.name !== 'string') return undefined;
  return {
    kind: typeof ref.kind === 'string' ? ref.kind : '',
    name: ref.name,
    namespace: typeof ref.namespace === 'string' ? ref.namespace : a.namespace,
  };
}
