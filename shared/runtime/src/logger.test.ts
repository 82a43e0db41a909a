import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, type LoggerLike, type LogLevel, objectLogger, redactSecretData } from './logger.ts';

function capture(level: LogLevel = 'debug') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level,
    name: 'test-operator',
    destination: { write: (msg: string) => void lines.push(JSON.parse(msg)) },
  });
  return { logger, lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line with level, time, logger and msg', () => {
    const { logger, lines } = capture();
    logger.info({ revision: 'main@sha1:abc' }, 'artifact stored');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.level, 'info');
    assert.equal(line.logger, 'test-operator');
    assert.equal(line.msg, 'artifact stored');
    assert.equal(line.revision, 'main@sha1:abc');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('fits the LoggerLike slice components accept', () => {
    const { logger, lines } = capture();
    const like: LoggerLike = logger;
    like.warn({ a: 1 }, 'through the slice');
    assert.equal(lines[0]!.msg, 'through the slice');
  });

  it('drops lines below the level', () => {
    const { logger, lines } = capture('warn');
    logger.debug('no');
    logger.info('no');
    logger.warn('yes');
    logger.error('yes');
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'error'],
    );
  });

  it('redacts passwords, tokens and authorization headers', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        password: 'p1',
        token: 't1',
        auth: { password: 'p2', token: 't2', username: 'git' },
        req: { headers: { authorization: 'Bearer abc', accept: 'json' } },
        authorization: 'Basic xyz',
      },
      'auth',
    );
    const line = lines[0]!;
    assert.equal(line.password, '[Redacted]');
    assert.equal(line.token, '[Redacted]');
    assert.deepEqual(line.auth, { password: '[Redacted]', token: '[Redacted]', username: 'git' });
    assert.deepEqual(line.req, { headers: { authorization: '[Redacted]', accept: 'json' } });
    assert.equal(line.authorization, '[Redacted]');
    assert.doesNotMatch(JSON.stringify(line), /p1|p2|t1|t2|abc|xyz/);
  });

  it('masks the data of Secrets at any depth but keeps their keys and other objects', () => {
    const { logger, lines } = capture();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      data: { 'tls.key': 'c2VjcmV0' },
      stringData: { password: 'hunter2' },
    };
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: { a: 'visible' },
    };
    logger.info({ object: secret, applied: [configMap, { wrapper: { obj: secret } }] }, 'applied');
    const line = lines[0] as { object: typeof secret; applied: unknown[] };
    assert.deepEqual(line.object.data, { 'tls.key': '[Redacted]' });
    assert.deepEqual(line.object.stringData, { password: '[Redacted]' });
    assert.equal(line.object.metadata.name, 'creds');
    assert.deepEqual(line.applied[0], configMap);
    assert.doesNotMatch(JSON.stringify(line), /c2VjcmV0|hunter2/);
    // The caller's object is untouched.
    assert.equal(secret.data['tls.key'], 'c2VjcmV0');
  });

  it('serializes errors with message and stack', () => {
    const { logger, lines } = capture();
    logger.error({ err: new Error('boom') }, 'reconcile failed');
    const err = lines[0]!.err as { message: string; stack: string; type: string };
    assert.equal(err.message, 'boom');
    assert.equal(err.type, 'Error');
    assert.match(err.stack, /boom/);
  });
});

describe('objectLogger', () => {
  it('adds kind, namespace, name and reconcileID to every line', () => {
    const { logger, lines } = capture();
    const obj = { kind: 'GitRepository', metadata: { namespace: 'apps', name: 'podinfo' } };
    const log = objectLogger(logger, obj, 'r-1');
    log.info('one');
    log.child({ step: 'fetch' }).debug('two');
    for (const line of lines) {
      assert.equal(line.kind, 'GitRepository');
      assert.equal(line.namespace, 'apps');
      assert.equal(line.name, 'podinfo');
      assert.equal(line.reconcileID, 'r-1');
    }
    assert.equal(lines[1]!.step, 'fetch');
  });

  it('makes a fresh reconcileID when none is given', () => {
    const { logger, lines } = capture();
    const obj = { kind: 'Kustomization', metadata: { namespace: 'a', name: 'b' } };
    objectLogger(logger, obj).info('x');
    objectLogger(logger, obj).info('y');
    assert.match(String(lines[0]!.reconcileID), /^[0-9a-f-]{36}$/);
    assert.notEqual(lines[0]!.reconcileID, lines[1]!.reconcileID);
  });
});

describe('redactSecretData', () => {
  const cases: [string, unknown, unknown][] = [
    ['leaves scalars', 'x', 'x'],
    ['leaves non-Secrets', { kind: 'ConfigMap', data: { a: '1' } }, { kind: 'ConfigMap', data: { a: '1' } }],
    ['masks a Secret', { kind: 'Secret', data: { a: '1' } }, { kind: 'Secret', data: { a: '[Redacted]' } }],
    ['masks non-map data whole', { kind: 'Secret', data: 'blob' }, { kind: 'Secret', data: '[Redacted]' }],
    [
      'masks inside arrays',
      [{ kind: 'Secret', stringData: { b: '2' } }],
      [{ kind: 'Secret', stringData: { b: '[Redacted]' } }],
    ],
  ];
  for (const [name, input, want] of cases) {
    it(name, () => assert.deepEqual(redactSecretData(input), want));
  }

  it('returns the same object when nothing changes', () => {
    const obj = { a: { b: [1, 2] } };
    assert.equal(redactSecretData(obj), obj);
  });
});
