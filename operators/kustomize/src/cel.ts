import { parse } from '@marcbachmann/cel-js';

/** A CEL expression that does not compile or does not evaluate to a boolean; the message quotes it. */
export class CelError extends Error {
  override name = 'CelError';
}

export interface CompiledExpression {
  source: string;
  /** Evaluates to a boolean; a missing field or a non-boolean result is a CelError. */
  evaluate(vars: Record<string, unknown>): boolean;
}

const firstLine = (message: string) => message.split('\n')[0]!.trim();

/** Compiles a CEL expression once, so a bad one is reported when the spec is read, not per object. */
export function compileExpression(source: string): CompiledExpression {
  let program: ReturnType<typeof parse>;
  try {
    program = parse(source);
  } catch (err) {
    throw new CelError(`invalid CEL expression '${source}': ${firstLine((err as Error).message)}`);
  }
  return {
    source,
    evaluate(vars) {
      let result: unknown;
      try {
        result = program(vars);
      } catch (err) {
        throw new CelError(`evaluating '${source}': ${firstLine((err as Error).message)}`);
      }
      if (typeof result !== 'boolean') {
        throw new CelError(`'${source}' must evaluate to a boolean, got ${typeof result}`);
      }
      return result;
    },
  };
}
