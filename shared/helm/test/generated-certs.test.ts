// sprig's generators (genCA, genSignedCert, genSelfSignedCert, genPrivateKey) in the renderer:
// their RSA keys come from the host (hack/tools/helm-renderer/sprig-overlay), so what a chart
// puts in its TLS Secrets must still be a working set: a certificate its CA signed, the key that
// matches it, the names asked for, the key sizes sprig uses, and fresh keys on every render.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { renderChart } from '../src/index.ts';
import { requireHelmBinaries, TESTDATA } from './helm-oracle.ts';

requireHelmBinaries();

interface Secret {
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

async function renderSecrets(): Promise<Map<string, Secret>> {
  const out = await renderChart({
    chartDir: join(TESTDATA, 'generated-certs'),
    releaseName: 'web',
    namespace: 'apps',
    limits: { timeoutMs: 120_000, memoryBytes: 1 << 30 },
  });
  const secrets = parseAllDocuments(out).map((d) => d.toJS() as Secret);
  return new Map(secrets.map((s) => [s.metadata.name, s]));
}

const decoded = (s: Secret | undefined, key: string): string => {
  const value = s?.data?.[key];
  assert.ok(value, `${s?.metadata.name} has ${key}`);
  return Buffer.from(value, 'base64').toString('utf8');
};

describe('generated keys and certificates', () => {
  it('genSignedCert: signed by its genCA, with the matching 2048-bit key and the names asked for', async () => {
    const web = (await renderSecrets()).get('web-tls');
    const ca = new X509Certificate(decoded(web, 'ca.crt'));
    const cert = new X509Certificate(decoded(web, 'tls.crt'));
    const key = createPrivateKey(decoded(web, 'tls.key'));
    assert.ok(ca.ca, 'genCA makes a CA certificate');
    assert.match(ca.subject, /CN=demo-ca/);
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'the CA signed the certificate');
    assert.ok(cert.checkPrivateKey(key), 'tls.key is the certificate key');
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(key.asymmetricKeyDetails?.publicExponent, 65537n);
    assert.equal(cert.subjectAltName, 'DNS:web, DNS:web.apps.svc, IP Address:10.0.0.7');
    assert.ok(!cert.ca);
  });

  it('genSelfSignedCert and genPrivateKey: a self-signed pair, a 4096-bit RSA key, an ECDSA key', async () => {
    const secrets = await renderSecrets();
    const self = secrets.get('self-tls');
    const cert = new X509Certificate(decoded(self, 'tls.crt'));
    assert.ok(cert.verify(cert.publicKey), 'self-signed');
    assert.ok(cert.checkPrivateKey(createPrivateKey(decoded(self, 'tls.key'))));
    const keys = secrets.get('keys')?.stringData ?? {};
    const rsa = createPrivateKey(keys.rsa ?? '');
    assert.equal(rsa.asymmetricKeyType, 'rsa');
    assert.equal(rsa.asymmetricKeyDetails?.modulusLength, 4096);
    assert.match(keys.rsa ?? '', /^-----BEGIN RSA PRIVATE KEY-----\n/);
    assert.equal(createPrivateKey(keys.ecdsa ?? '').asymmetricKeyType, 'ec');
  });

  it('every render generates new keys', async () => {
    const [a, b] = [await renderSecrets(), await renderSecrets()];
    assert.notEqual(decoded(a.get('web-tls'), 'tls.key'), decoded(b.get('web-tls'), 'tls.key'));
    assert.notEqual(a.get('keys')?.stringData?.rsa, b.get('keys')?.stringData?.rsa);
  });
});
