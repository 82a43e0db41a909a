import { spawn } from 'node:child_process';
import type { ExecConfig, KubeCluster } from './kube-config.ts';

/** What an exec credential plugin answers in `status` (client.authentication.k8s.io). */
export interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

// Enough of a failing plugin's stderr to say why, not a page of it.
const STDERR_KEPT = 500;

/**
 * Runs a kubeconfig's exec plugin as kubectl does: its args and env added to the operator's,
 * KUBERNETES_EXEC_INFO describing the call (non-interactive; the cluster when the plugin asks for
 * it), and its stdout read as an ExecCredential. Only for the operator's own kubeconfig: a
 * tenant's is refused before it gets here (untrusted-kubeconfig.ts).
 */
export function runExecPlugin(exec: ExecConfig, cluster: KubeCluster): Promise<ExecCredentialStatus> {
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1';
  const info = {
    apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(exec.provideClusterInfo
        ? {
            cluster: {
              server: cluster.server,
              'tls-server-name': cluster.tlsServerName,
              'certificate-authority-data': cluster.caData,
              'insecure-skip-tls-verify': cluster.skipTLSVerify,
            },
          }
        : {}),
    },
  };
  const env: Record<string, string | undefined> = {
    ...process.env,
    KUBERNETES_EXEC_INFO: JSON.stringify(info),
  };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  const what = `the exec credential plugin ${exec.command}`;
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command, exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-STDERR_KEPT);
    });
    child.on('error', (err) => reject(new Error(`${what} could not run: ${err.message}`)));
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`${what} exited with ${code}: ${stderr.trim() || '(no output on stderr)'}`));
        return;
      }
      let status: unknown;
      try {
        status = (JSON.parse(stdout) as { status?: unknown }).status;
      } catch {
        reject(new Error(`${what} did not print an ExecCredential (JSON) on stdout`));
        return;
      }
      if (typeof status !== 'object' || status === null) {
        reject(new Error(`${what} printed an ExecCredential without a status`));
        return;
      }
      resolve(status as ExecCredentialStatus);
    });
  });
}
