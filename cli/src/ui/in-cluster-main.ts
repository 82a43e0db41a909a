// The in-cluster UI as the operator image runs it (`node /app/dist/ui.mjs`, config/ui): the same
// server as `mooring ui --in-cluster`, without the rest of the CLI, reading the pod's ServiceAccount
// (or $KUBECONFIG) and the page prebuilt into $MOORING_UI_PAGE_DIR.
import { parseArgs } from 'node:util';
import { CliError } from '../cli-error.ts';
import { Session } from '../session.ts';
import { serveInCluster } from './in-cluster-serve.ts';

const { values } = parseArgs({
  options: {
    listen: { type: 'string', default: process.env.MOORING_UI_LISTEN ?? '0.0.0.0:9090' },
    auth: { type: 'string', default: process.env.MOORING_UI_AUTH ?? 'token' },
    'proxy-secret-file': { type: 'string' },
    'allowed-origin': { type: 'string' },
    namespace: { type: 'string', short: 'n' },
  },
});
try {
  await serveInCluster({
    session: new Session({ namespace: values.namespace }),
    namespace: values.namespace,
    listen: values.listen!,
    auth: values.auth!,
    proxySecretFile: values['proxy-secret-file'],
    allowedOrigin: values['allowed-origin'],
  });
} catch (err) {
  process.stderr.write(`mooring ui: ${err instanceof CliError ? err.message : String(err)}\n`);
  process.exit(err instanceof CliError ? err.exitCode : 1);
}
