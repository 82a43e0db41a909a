/** A chart could not be rendered. `kind` tells the cases apart without instanceof. */
export class HelmRenderError extends Error {
  override name = 'HelmRenderError';
  readonly kind: 'timeout' | 'memory' | 'template' | 'chart' | 'renderer' = 'renderer';
}

/** The render ran past `limits.timeoutMs` and was stopped. */
export class HelmTimeoutError extends HelmRenderError {
  override name = 'HelmTimeoutError';
  override readonly kind = 'timeout';
  readonly timeoutMs: number;
  constructor(chart: string, timeoutMs: number) {
    super(`rendering chart ${chart} took longer than the ${timeoutMs} ms time limit and was stopped`);
    this.timeoutMs = timeoutMs;
  }
}

/** The render needed more than `limits.memoryBytes` and was stopped. */
export class HelmMemoryError extends HelmRenderError {
  override name = 'HelmMemoryError';
  override readonly kind = 'memory';
  readonly memoryBytes: number;
  constructor(chart: string, memoryBytes: number, detail: string) {
    super(
      `rendering chart ${chart} needed more than the ${memoryBytes} byte memory limit and was stopped${detail ? ` (${detail})` : ''}`,
    );
    this.memoryBytes = memoryBytes;
  }
}

/**
 * Helm refused the chart or its values: a template error, a `required` or `fail`, a
 * values.schema.json violation, a missing dependency. `helmMessage` is Helm's own message, the
 * text `helm template` prints after "Error: ".
 */
export class HelmTemplateError extends HelmRenderError {
  override name = 'HelmTemplateError';
  override readonly kind = 'template';
  readonly helmMessage: string;
  constructor(chart: string, helmMessage: string) {
    super(`rendering chart ${chart}: ${helmMessage}`);
    this.helmMessage = helmMessage;
  }
}

/** The chart directory cannot be handed to the renderer (missing, or a link that leaves it). */
export class HelmChartError extends HelmRenderError {
  override name = 'HelmChartError';
  override readonly kind = 'chart';
}
