import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { VERIFIERS } from './index.ts';
import type { HookRequest, Verification } from './types.ts';

const TOKEN = 'hook-SECRET-91c2';
const body = Buffer.from('{"ref":"refs/heads/main","repository":{"full_name":"org/app"}}');
const hmac = (alg: string, key: string, b: Buffer) => createHmac(alg, key).update(b).digest('hex');
const req = (headers: Record<string, string>, b: Buffer = body): HookRequest => ({ headers, body: b });
const cdevent = Buffer.from(
  JSON.stringify({
    context: { id: '1', source: '/ci', type: 'dev.cdevents.change.merged.0.1.2', version: '0.3.0' },
    subject: { id: 'pr-1', content: {} },
  }),
);

interface Row {
  type: string;
  name: string;
  request: HookRequest;
  want: 'ok' | 401 | 400;
  event?: string;
}

const ROWS: Row[] = [
  { type: 'generic', name: 'anything on the secret path', request: req({}), want: 'ok' },
  {
    type: 'generic-hmac',
    name: 'sha256',
    request: req({ 'x-signature': `sha256=${hmac('sha256', TOKEN, body)}` }),
    want: 'ok',
  },
  {
    type: 'generic-hmac',
    name: 'sha1',
    request: req({ 'x-signature': `sha1=${hmac('sha1', TOKEN, body)}` }),
    want: 'ok',
  },
  {
    type: 'generic-hmac',
    name: 'sha512',
    request: req({ 'x-signature': `sha512=${hmac('sha512', TOKEN, body)}` }),
    want: 'ok',
  },
  {
    type: 'generic-hmac',
    name: 'md5 is refused',
    request: req({ 'x-signature': `md5=${hmac('md5', TOKEN, body)}` }),
    want: 401,
  },
  {
    type: 'generic-hmac',
    name: 'wrong key',
    request: req({ 'x-signature': `sha256=${hmac('sha256', 'other', body)}` }),
    want: 401,
  },
  { type: 'generic-hmac', name: 'unsigned', request: req({}), want: 401 },
  {
    type: 'github',
    name: 'X-Hub-Signature-256',
    request: req({
      'x-hub-signature-256': `sha256=${hmac('sha256', TOKEN, body)}`,
      'x-github-event': 'push',
    }),
    want: 'ok',
    event: 'push',
  },
  {
    type: 'github',
    name: 'legacy sha1 X-Hub-Signature',
    request: req({ 'x-hub-signature': `sha1=${hmac('sha1', TOKEN, body)}`, 'x-github-event': 'push' }),
    want: 'ok',
    event: 'push',
  },
  {
    type: 'github',
    name: 'a good sha1 does not rescue a bad sha256',
    request: req({
      'x-hub-signature-256': `sha256=${hmac('sha256', 'x', body)}`,
      'x-hub-signature': `sha1=${hmac('sha1', TOKEN, body)}`,
    }),
    want: 401,
  },
  {
    type: 'github',
    name: 'body changed after signing',
    request: req(
      { 'x-hub-signature-256': `sha256=${hmac('sha256', TOKEN, body)}` },
      Buffer.from('{"ref":"x"}'),
    ),
    want: 401,
  },
  { type: 'github', name: 'unsigned', request: req({ 'x-github-event': 'push' }), want: 401 },
  {
    type: 'github',
    name: 'gitea event header',
    request: req({ 'x-hub-signature-256': `sha256=${hmac('sha256', TOKEN, body)}`, 'x-gitea-event': 'push' }),
    want: 'ok',
    event: 'push',
  },
  {
    type: 'gitlab',
    name: 'token header',
    request: req({ 'x-gitlab-token': TOKEN, 'x-gitlab-event': 'Push Hook' }),
    want: 'ok',
    event: 'Push Hook',
  },
  { type: 'gitlab', name: 'wrong token', request: req({ 'x-gitlab-token': `${TOKEN}x` }), want: 401 },
  { type: 'gitlab', name: 'no token', request: req({}), want: 401 },
  {
    type: 'bitbucket',
    name: 'X-Hub-Signature sha256',
    request: req({
      'x-hub-signature': `sha256=${hmac('sha256', TOKEN, body)}`,
      'x-event-key': 'repo:refs_changed',
    }),
    want: 'ok',
    event: 'repo:refs_changed',
  },
  { type: 'bitbucket', name: 'wrong', request: req({ 'x-hub-signature': 'sha256=00' }), want: 401 },
  {
    type: 'harbor',
    name: 'Authorization equals the token',
    request: req({ authorization: TOKEN }),
    want: 'ok',
  },
  {
    type: 'harbor',
    name: 'Bearer prefix is not the token',
    request: req({ authorization: `Bearer ${TOKEN}` }),
    want: 401,
  },
  {
    type: 'nexus',
    name: 'HMAC-SHA1',
    request: req({ 'x-nexus-webhook-signature': hmac('sha1', TOKEN, body) }),
    want: 'ok',
  },
  {
    type: 'nexus',
    name: 'sha256 is not nexus',
    request: req({ 'x-nexus-webhook-signature': hmac('sha256', TOKEN, body) }),
    want: 401,
  },
  { type: 'dockerhub', name: 'JSON object', request: req({}), want: 'ok' },
  { type: 'quay', name: 'not JSON', request: req({}, Buffer.from('<xml/>')), want: 400 },
  {
    type: 'cdevents',
    name: 'CDEvent with matching Ce-Type',
    request: req({ 'ce-type': 'dev.cdevents.change.merged.0.1.2' }, cdevent),
    want: 'ok',
    event: 'dev.cdevents.change.merged.0.1.2',
  },
  { type: 'cdevents', name: 'Ce-Type mismatch', request: req({ 'ce-type': 'other' }, cdevent), want: 400 },
  { type: 'cdevents', name: 'no Ce-Type', request: req({}, cdevent), want: 400 },
];

const outcome = (v: Verification) => (v.ok ? 'ok' : v.status);

describe('receiver verification', () => {
  for (const row of ROWS) {
    test(`${row.type}: ${row.name} → ${row.want}`, () => {
      const v = VERIFIERS[row.type]!(row.request, TOKEN);
      assert.equal(outcome(v), row.want);
      if (row.event) assert.equal(v.ok && v.event, row.event);
      if (!v.ok) assert.ok(!v.message.includes(TOKEN), 'the refusal does not echo the token');
    });
  }
});

/** A small seeded generator so a failing fuzz case can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Payloads shaped like GitHub, GitLab and Bitbucket pushes, then broken: wrong types, nulls, nesting, truncation. */
function payload(r: () => number): Buffer {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const junk = (): unknown =>
    pick<() => unknown>([
      () => null,
      () => r() * 1e9,
      () => 'x'.repeat(Math.floor(r() * 50)),
      () => [],
      () => ({}),
      () => true,
      () => ({ __proto__: { polluted: true } }),
    ])();
  const shapes: (() => unknown)[] = [
    () => ({
      ref: junk(),
      repository: pick([junk(), { full_name: junk(), clone_url: junk() }]),
      commits: pick([junk(), [junk()]]),
    }),
    () => ({
      object_kind: pick(['push', junk()]),
      project: pick([junk(), { path_with_namespace: junk() }]),
      checkout_sha: junk(),
    }),
    () => ({
      eventKey: 'repo:refs_changed',
      changes: pick([[], junk(), [{ ref: junk() }]]),
      repository: junk(),
    }),
    () => ({
      context: pick([junk(), { id: junk(), type: junk(), source: junk(), version: junk() }]),
      subject: junk(),
    }),
    () => JSON.parse(cdevent.toString()),
    () => {
      let v: unknown = 1;
      for (let i = 0; i < Math.floor(r() * 5000); i++) v = [v];
      return v;
    },
  ];
  let text = JSON.stringify(pick(shapes)()) ?? 'null';
  const mode = r();
  if (mode < 0.15) text = text.slice(0, Math.floor(r() * text.length));
  else if (mode < 0.25) return randomBytes(Math.floor(r() * 256));
  else if (mode < 0.3) text = '';
  return Buffer.from(text);
}

function headersFor(type: string, b: Buffer, r: () => number): Record<string, string | string[]> {
  const sign = r() < 0.5;
  const key = sign ? TOKEN : 'wrong';
  const h: Record<string, string | string[]> = {};
  const maybe = (name: string, value: string) => {
    const m = r();
    if (m < 0.7) h[name] = value;
    else if (m < 0.8) h[name] = [value, 'x'];
    else if (m < 0.9) h[name] = value.slice(0, Math.floor(r() * value.length));
  };
  maybe(
    'x-signature',
    `${['sha1', 'sha256', 'sha512', 'md5', ''][Math.floor(r() * 5)]}=${hmac('sha256', key, b)}`,
  );
  maybe('x-hub-signature-256', `sha256=${hmac('sha256', key, b)}`);
  maybe('x-hub-signature', `sha256=${hmac('sha256', key, b)}`);
  maybe('x-gitlab-token', key);
  maybe('authorization', key);
  maybe('x-nexus-webhook-signature', hmac('sha1', key, b));
  maybe('ce-type', 'dev.cdevents.change.merged.0.1.2');
  maybe('x-github-event', 'push');
  void type;
  return h;
}

// npm run test:unit's quick pass scales the count (MOORING_FUZZ_SCALE, as test/fuzz/fuzz.ts reads
// it; this package cannot import the test workspace); npm test runs all 10,000.
const PAYLOADS = Math.round(10_000 * Number(process.env.MOORING_FUZZ_SCALE || 1));

describe('receiver fuzzing', () => {
  for (const type of Object.keys(VERIFIERS)) {
    test(`${type}: ${PAYLOADS.toLocaleString('en')} generated payloads never throw and never echo the token`, () => {
      const r = rng(type.length * 7919 + 17);
      let accepted = 0;
      for (let i = 0; i < PAYLOADS; i++) {
        const b = payload(r);
        const v = VERIFIERS[type]!({ headers: headersFor(type, b, r), body: b }, TOKEN);
        if (v.ok) accepted++;
        else {
          assert.ok(v.status === 400 || v.status === 401);
          assert.ok(!v.message.includes(TOKEN));
        }
      }
      // The generator signs about half the requests correctly, so both paths are exercised.
      if (type !== 'generic') assert.ok(accepted > 0 && accepted < PAYLOADS, `${accepted} accepted`);
    });
  }
});
