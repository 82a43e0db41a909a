/** A build failure the user can act on: says which file or resource and what is wrong. */
export class KustomizeError extends Error {
  override name = 'KustomizeError';
}

/**
 * A file the build read is not valid YAML: names the file (its path from the build's root, whole),
 * the line and column (1-based, counted from the start of the file) and the parser's reason,
 * e.g. `apps/base/deploy.yaml: invalid YAML at line 5, column 3: All mapping items must start at the same column`.
 */
export class YamlSyntaxError extends KustomizeError {
  override name = 'YamlSyntaxError';
  readonly file: string;
  /** Undefined (with column) when the parser gave no position. */
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly reason: string;
  constructor(file: string, line: number | undefined, column: number | undefined, reason: string) {
    super(
      line === undefined
        ? `${file}: invalid YAML: ${reason}`
        : `${file}: invalid YAML at line ${line}, column ${column ?? 1}: ${reason}`,
    );
    this.file = file;
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}
