/** The plain-JSON model every part of the render engine shares. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

/** A resource's identity as kustomize sees it: group/version/kind plus namespace/name. */
export interface ResId {
  group: string;
  version: string;
  kind: string;
  name: string;
  /** '' for cluster-scoped resources and for namespaced ones without a namespace yet. */
  namespace: string;
}

/** One manifest flowing through the build, with the bookkeeping the transformers need. */
export interface Resource {
  object: JsonObject;
  /**
   * Identities this resource had before namePrefix/nameSuffix/namespace/hash-suffix changes, oldest first.
   * Name-reference fix-ups map a reference to an old identity onto the current one.
   */
  previousIds: ResId[];
  /** Where the resource came from: for `buildMetadata: [originAnnotations]` and error messages. */
  origin?: {
    path: string;
    configuredIn?: string;
    /** The builtin that made it, e.g. `ConfigMapGenerator` (with configuredIn). */
    configuredBy?: string;
    /** The config object's metadata.name and namespace, for a generator listed under `generators:`. */
    configuredByName?: string;
    configuredByNamespace?: string;
  };
  /** Builtin transformers that ran over it, for `buildMetadata: [transformerAnnotations]`. */
  transformations?: {
    configuredIn: string;
    configuredBy: string;
    /** The config object's metadata, for a transformer listed under `transformers:`. */
    name?: string;
    namespace?: string;
  }[];
  /** Names of the `vars:` that take their value from this resource (kustomize's refVarNames). */
  refVarNames?: string[];
  /**
   * Made by helmCharts (kustomize's internal helm-generated annotation): namespace transformers
   * leave it alone, as helm already set its namespace.
   */
  helmGenerated?: boolean;
  /** Present on ConfigMaps and Secrets made by a generator. */
  generated?: { behavior: 'create' | 'merge' | 'replace'; appendHash: boolean };
}
