import type { Artifact } from '@mooring/api';
import type { ArtifactRef, ArtifactStorage } from '@mooring/artifact';
import type { ReconcileContext } from '@mooring/runtime';

/** The part of a source's status the shared steps read and write. */
interface SourceStatus {
  artifact?: Artifact;
}

/** An artifact a kind's pack step just stored, with what the status records about how it was built. */
interface PackedArtifact<S extends SourceStatus> {
  artifact: Artifact;
  /** Status fields that say what the artifact was built from (spec.ignore and the like). */
  observed: Partial<S>;
  /** The NewArtifact event's message. */
  event: string;
}

/**
 * What every source kind's reconcile carries from step to step; a kind's run (GitRepositoryRun,
 * OciRepositoryRun) adds its own fields. Fields a step fills are optional until then.
 */
export interface SourceRun<S extends SourceStatus = SourceStatus> {
  readonly ctx: ReconcileContext;
  readonly status: S;
  readonly storage: ArtifactStorage;
  /** The object's place in storage. */
  readonly storageRef: ArtifactRef;
  /** `spec.timeout`: each remote operation's own limit (`ctx.deadline(timeoutMs)`), also handed to the Git client. */
  readonly timeoutMs: number;
  /** The revision upstream holds now. */
  revision?: string;
  /** The stored artifact holds `revision`, built from the same inputs: the build steps are skipped. */
  upToDate?: boolean;
  /** A scratch folder the build works in; removed when the reconcile ends, whatever happened. */
  scratch?: string;
  packed?: PackedArtifact<S>;
  /**
   * The object stores no artifact (an OCI HelmRepository, which only holds an address and
   * credentials): Ready's message. The artifact steps skip a run that has it.
   */
  noArtifact?: string;
}

/** The step's precondition: a field an earlier step fills. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not set; a step ran out of order`);
  return value;
}

/** Where an object's artifacts are stored. */
export function storageRefOf(
  kind: string,
  obj: { metadata: { namespace?: string; name?: string } },
): ArtifactRef {
  return { kind, namespace: obj.metadata.namespace ?? 'default', name: obj.metadata.name ?? '' };
}
