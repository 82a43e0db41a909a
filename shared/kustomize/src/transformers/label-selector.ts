import { KustomizeError } from '../errors.ts';

/** One parsed requirement of a Kubernetes label selector. */
export interface Requirement {
  key: string;
  operator: 'exists' | 'notExists' | 'in' | 'notIn' | 'gt' | 'lt';
  values: string[];
}

// Kubernetes' selector grammar (apimachinery labels.Parse), hand-written because no maintained npm
// package parses it; the grammar is small: `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k>1`, `k<1`.
const KEY = '[A-Za-z0-9][-A-Za-z0-9_./]*';
const VALUE = '[-A-Za-z0-9_.]*';
const NOT_EXISTS = new RegExp(`^!\\s*(${KEY})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`);
const COMPARE = new RegExp(`^(${KEY})\\s*(==|=|!=|>|<)\\s*(${VALUE})$`);
const EXISTS = new RegExp(`^(${KEY})$`);

/** Parses a label selector string; an empty string selects everything. */
export function parseSelector(selector: string): Requirement[] {
  const requirements: Requirement[] = [];
  for (const raw of splitTopLevel(selector)) {
    const text = raw.trim();
    if (text === '') {
      if (selector.trim() === '') continue;
      throw new KustomizeError(`Label selector '${selector}' has an empty requirement.`);
    }
    let m = NOT_EXISTS.exec(text);
    if (m) {
      requirements.push({ key: m[1] ?? '', operator: 'notExists', values: [] });
      continue;
    }
    m = SET.exec(text);
    if (m) {
      const values = (m[3] ?? '').split(',').map((v) => v.trim());
      if (values.some((v) => !new RegExp(`^${VALUE}$`).test(v))) {
        throw new KustomizeError(`Label selector '${selector}' has an invalid value in '${text}'.`);
      }
      requirements.push({ key: m[1] ?? '', operator: m[2] === 'in' ? 'in' : 'notIn', values });
      continue;
    }
    m = COMPARE.exec(text);
    if (m) {
      const op = m[2];
      const value = m[3] ?? '';
      if ((op === '>' || op === '<') && !/^-?[0-9]+$/.test(value)) {
        throw new KustomizeError(`Label selector '${selector}' compares '${m[1]}' with a non-integer.`);
      }
      const operator = op === '!=' ? 'notIn' : op === '>' ? 'gt' : op === '<' ? 'lt' : 'in';
      requirements.push({ key: m[1] ?? '', operator, values: [value] });
      continue;
    }
    m = EXISTS.exec(text);
    if (m) {
      requirements.push({ key: m[1] ?? '', operator: 'exists', values: [] });
      continue;
    }
    throw new KustomizeError(`Label selector '${selector}' cannot be parsed at '${text}'.`);
  }
  return requirements;
}

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** Whether a set of labels (or annotations) satisfies every requirement. */
export function matchesSelector(requirements: Requirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.operator) {
      case 'exists':
        return has;
      case 'notExists':
        return !has;
      case 'in':
        return has && r.values.includes(value ?? '');
      case 'notIn':
        return !has || !r.values.includes(value ?? '');
      case 'gt':
      case 'lt': {
        if (!has || !/^-?[0-9]+$/.test(value ?? '')) return false;
        const n = Number(value);
        const bound = Number(r.values[0]);
        return r.operator === 'gt' ? n > bound : n < bound;
      }
    }
    return false;
  });
}
