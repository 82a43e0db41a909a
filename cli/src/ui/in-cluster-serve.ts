import { readFile } from 'node:fs/promises';
import { CliError, EXIT_ERROR } from '../cli-error.ts';
import type { Session } from '../session.ts';
import type { InClusterAuth } from './in-cluster-auth.ts';
import { startUiServer } from './ui-server.ts';

/** What `mooring ui --in-cluster` and the image's `ui.mjs` take. */
export interface InClusterOptions {
  session: Session;
  namespace?: string;
  /** host:port */
  listen: string;
  auth: string;
  proxySecretFile?: string;
  allowedOrigin?: string;
}

/** Checks the options, serves the in-cluster UI, and returns once SIGTERM or SIGINT stopped it. */
export async function serveInCluster(opts: InClusterOptions): Promise<void> {
  const listen = /^(.*):(\d+)$/.exec(opts.listen);
  if (!listen || Number(listen[2]) > 65535)
    throw new CliError(
      `--listen '${opts.listen}' is not host:port: write e.g. --listen 0.0.0.0:9090.`,
      EXIT_ERROR,
    );
  let auth: InClusterAuth;
  if (opts.auth === 'token') auth = { mode: 'token' };
  else if (opts.auth === 'proxy') {
    const file = opts.proxySecretFile ?? process.env.MOORING_UI_PROXY_SECRET_FILE;
    if (!file)
      throw new CliError(
        '--auth proxy needs --proxy-secret-file: without it anyone could claim to be anyone.',
        EXIT_ERROR,
      );
    const proxySecret = (await readFile(file, 'utf8')).trim();
    if (proxySecret.length < 16)
      throw new CliError(
        `the proxy secret in ${file} is shorter than 16 characters: make a long random one.`,
        EXIT_ERROR,
      );
    auth = { mode: 'proxy', proxySecret };
  } else throw new CliError(`--auth '${opts.auth}' is not token or proxy.`, EXIT_ERROR);
  const client = await opts.session.client();
  const server = await startUiServer({
    client,
    namespace: opts.namespace,
    port: Number(listen[2]),
    inCluster: { auth, host: listen[1] || '0.0.0.0', allowedOrigin: opts.allowedOrigin },
  });
  // Never a token or secret here: only where it listens and how users sign in.
  process.stdout.write(`mooring ui: serving ${server.url} in-cluster, sign-in by ${auth.mode}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  opts.session.close();
}
