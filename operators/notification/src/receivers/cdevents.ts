import { header, tryJson, type Verifier } from './types.ts';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `cdevents`: a CloudEvents binary-mode request carrying a CDEvent: `Ce-Type` names the event and
 * must equal the body's `context.type`; `context` (id, source, type, version) and `subject` are
 * required by the CDEvents spec. Like Flux, no signature: the secret path authenticates.
 */
export const cdevents: Verifier = (req) => {
  const ceType = header(req, 'ce-type');
  if (!ceType) return { ok: false, status: 400, message: 'the Ce-Type header is missing' };
  const body = tryJson(req.body);
  if (!isObject(body) || !isObject(body.context) || !isObject(body.subject))
    return { ok: false, status: 400, message: 'the body is not a CDEvent (context and subject objects)' };
  const ctx = body.context;
  for (const f of ['id', 'source', 'type', 'version'] as const) {
    if (typeof ctx[f] !== 'string' || ctx[f] === '')
      return { ok: false, status: 400, message: `the CDEvent has no context.${f}` };
  }
  if (ctx.type !== ceType) return { ok: false, status: 400, message: 'Ce-Type does not match context.type' };
  return { ok: true, event: ceType };
};
