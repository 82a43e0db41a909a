import { SUBSTITUTE_ANNOTATION, SUBSTITUTE_DISABLED } from '@mooring/api';
import { parse, stringify } from 'yaml';

export interface SubstituteOptions {
  /** Undefined variables without a default fail the build (Flux 1.9's default). */
  strict: boolean;
  /** `WithVariables` skips objects when no variable is defined at all; `Always` substitutes anyway. */
  strategy: 'WithVariables' | 'Always';
}

/** A substitution that cannot be done; names the variable and the object, never a value. */
export class SubstitutionError extends Error {
  override name = 'SubstitutionError';
}

// `$${name...}` is an escape; `${name}`, `${name:=default}`, `${name=default}`, `${name:-default}`, `${name-default}`.
const REFERENCE = /\$(\$?)\{([^{}]*)\}/g;
const NAME = /^[_A-Za-z][_A-Za-z0-9]*$/;

/**
 * Flux's postBuild substitution on one object: the object is written as YAML, every braced
 * reference is replaced (only the braced form; `$${var}` stays as a literal `${var}`), and the
 * text is parsed back, so a number or boolean substituted into an unquoted field becomes one.
 * Objects labelled or annotated `kustomize.mooring.dev/substitute: disabled` are left alone.
 */
export function substituteVariables<T extends Record<string, unknown>>(
  manifest: T,
  vars: Record<string, string>,
  options: SubstituteOptions,
  objectName: string,
): T {
  const meta = (manifest.metadata ?? {}) as {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const marker = meta.annotations?.[SUBSTITUTE_ANNOTATION] ?? meta.labels?.[SUBSTITUTE_ANNOTATION];
  if (marker?.toLowerCase() === SUBSTITUTE_DISABLED) return manifest;
  if (options.strategy === 'WithVariables' && Object.keys(vars).length === 0) return manifest;

  const text = stringify(manifest, { lineWidth: 0 });
  if (!text.includes('${')) return manifest;
  const replaced = text.replace(REFERENCE, (whole, escaped: string, body: string) => {
    if (escaped) return whole.slice(1);
    const m = /^([^:=-]*)(?:(:?[=-])([\s\S]*))?$/.exec(body);
    const name = m?.[1] ?? body;
    if (!NAME.test(name)) {
      throw new SubstitutionError(`${objectName}: '\${${body}}' is not a valid variable reference`);
    }
    const value = vars[name];
    const op = m?.[2];
    const fallback = m?.[3];
    if (op !== undefined) {
      // `:=`/`:-` also replace an empty value; `=`/`-` only an unset one.
      const useDefault = op.startsWith(':') ? !value : value === undefined;
      return useDefault ? (fallback ?? '') : value!;
    }
    if (value === undefined) {
      if (options.strict)
        throw new SubstitutionError(`${objectName}: variable '${name}' is not set (strict mode)`);
      return '';
    }
    return value;
  });
  try {
    return parse(replaced) as T;
  } catch (err) {
    throw new SubstitutionError(
      `${objectName}: the manifest is not valid YAML after substitution: ${(err as Error).message.split('\n')[0]}`,
    );
  }
}
