import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files of the control plane's PKI, all PEM. */
export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim() || (err as Error).message}`);
  }
}

/**
 * Generates a CA, a serving certificate for 127.0.0.1/localhost, an admin client certificate in
 * `system:masters` and a service-account signing key pair. EC P-256 keeps generation fast; the
 * openssl command line keeps this free of a crypto dependency.
 */
export function generatePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-days',
      '365',
      '-subj',
      '/CN=mooring-test-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
    ],
    dir,
  );

  const sign = (name: string, subject: string, ext: string): void => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(['req', ...ec, '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '365',
      ].concat(['-out', `${name}.crt`, '-extfile', `${name}.ext`]),
      dir,
    );
  };
  sign(
    'apiserver',
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  sign(
    'admin',
    '/O=system:masters/CN=mooring-admin',
    'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n',
  );

  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key'], dir);
  openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);

  return {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}
