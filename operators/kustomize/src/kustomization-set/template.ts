// The template language of a KustomizationSet: `{{ .a.b }}` reads a parameter, `| fn` pipes it
// through one of a few pure functions. Nothing else: no loops, no calls out, no code to run, so a
// template author cannot make the operator do anything but substitute strings (docs/decisions.md).

/** Parameters of one element: nested maps of strings, numbers and booleans. */
export type Params = { readonly [key: string]: unknown };

/** A template that does not render: the expression and why. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

type Fn = (value: unknown, arg: string | undefined, found: boolean) => unknown;

const FUNCTIONS: Record<string, Fn> = {
  default: (value, arg, found) => (found && value !== '' ? value : arg),
  lower: (value) => String(value).toLowerCase(),
  upper: (value) => String(value).toUpperCase(),
  trim: (value) => String(value).trim(),
  // A DNS-1123 label fragment, for names made of parameters.
  slug: (value) =>
    String(value)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, ''),
  quote: (value) => JSON.stringify(String(value)),
};

const EXPRESSION = /\{\{(.*?)\}\}/g;
const PATH = /^(\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_./-]+)*)$/;
// A label or annotation key may hold dots and slashes, so `index` reads one key of a map.
const INDEX = /^index\s+(\.[A-Za-z0-9_.-]+)\s+"([^"]*)"$/;
const CALL = /^([a-z]+)(?:\s+"([^"]*)")?$/;

function lookup(params: Params, path: string): { found: boolean; value: unknown } {
  let cur: unknown = params;
  for (const part of path.slice(1).split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part))
      return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

function evaluate(expression: string, params: Params): unknown {
  const [head, ...pipes] = expression.split('|').map((p) => p.trim());
  let found: boolean;
  let value: unknown;
  const index = INDEX.exec(head ?? '');
  if (index) {
    const map = lookup(params, index[1]!);
    const key = index[2]!;
    found = map.found && typeof map.value === 'object' && map.value !== null && Object.hasOwn(map.value, key);
    value = found ? (map.value as Record<string, unknown>)[key] : undefined;
  } else if (head && PATH.test(head)) {
    ({ found, value } = lookup(params, head));
  } else {
    throw new TemplateError(`{{${expression}}}: expected a parameter path such as .cluster.name`);
  }
  for (const pipe of pipes) {
    const call = CALL.exec(pipe);
    const fn = call ? FUNCTIONS[call[1]!] : undefined;
    if (!call || !fn)
      throw new TemplateError(
        `{{${expression}}}: unknown function ${pipe}; known: ${Object.keys(FUNCTIONS).join(', ')}`,
      );
    value = fn(value, call[2], found);
    found = value !== undefined;
  }
  if (!found) throw new TemplateError(`{{${expression}}}: no parameter ${head} in this element`);
  if (value !== null && typeof value === 'object')
    throw new TemplateError(`{{${expression}}}: ${head} is a map, not a value`);
  return value;
}

/** Renders one string; a string that is one expression keeps its value's type (a number stays one). */
export function renderString(text: string, params: Params): unknown {
  const whole = /^\{\{([^}]*)\}\}$/.exec(text);
  if (whole) return evaluate(whole[1]!, params);
  return text.replace(EXPRESSION, (_m, expression: string) => String(evaluate(expression, params)));
}

/** Renders every string (keys included) in a JSON value. */
export function renderValue(value: unknown, params: Params): unknown {
  if (typeof value === 'string') return renderString(value, params);
  if (Array.isArray(value)) return value.map((v) => renderValue(v, params));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[String(renderString(k, params))] = renderValue(v, params);
    return out;
  }
  return value;
}
