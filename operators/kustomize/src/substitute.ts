import { SUBSTITUTE_ANNOTATION, SUBSTITUTE_DISABLED } from '@mooring/api';
import { parse } from 'yaml';
import { fillSlots, REFERENCE, templateOf } from './substitute-template.ts';

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

// References: `${name}`, `${name:=default}`, `${name=default}`, `${name:-default}`, `${name-default}`.
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

  const template = templateOf(manifest);
  if (!template.hasReferences) return manifest;
  const replace = (source: string, check?: (value: string) => void) =>
    source.replace(REFERENCE, (whole, escaped: string, body: string) => {
      if (escaped) return whole.slice(1);
      const m = /^([^:=-]*)(?:(:?[=-])([\s\S]*))?$/.exec(body);
      const name = m?.[1] ?? body;
      if (!NAME.test(name)) {
        throw new SubstitutionError(`${objectName}: '\${${body}}' is not a valid variable reference`);
      }
      const value = vars[name];
      const op = m?.[2];
      const fallback = m?.[3];
      let out: string;
      if (op !== undefined) {
        // `:=`/`:-` also replace an empty value; `=`/`-` only an unset one.
        const useDefault = op.startsWith(':') ? !value : value === undefined;
        out = useDefault ? (fallback ?? '') : value!;
      } else if (value === undefined) {
        if (options.strict)
          throw new SubstitutionError(`${objectName}: variable '${name}' is not set (strict mode)`);
        out = '';
      } else out = value;
      check?.(out);
      return out;
    });
  // Most objects: only the scalars holding references are read again (substitute-template.ts).
  const filled = fillSlots(template, replace);
  if (filled) return filled as T;
  const replaced = replace(template.text);
  try {
    return parse(replaced) as T;
  } catch (err) {
    throw new SubstitutionError(
      `${objectName}: the manifest is not valid YAML after substitution: ${(err as Error).message.split('\n')[0]}`,
    );
  }
}
