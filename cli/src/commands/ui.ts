import type { Command } from 'commander';
import { sessionOf } from '../session.ts';

interface UiFlags {
  port: string;
  open: boolean;
  allNamespaces?: boolean;
  inCluster?: boolean;
  listen?: string;
  auth: string;
  proxySecretFile?: string;
  allowedOrigin?: string;
}

/** `mooring ui`: the web UI on 127.0.0.1, as the user, until interrupted. */
export function registerUi(program: Command): void {
  program
    .command('ui')
    .description(
      'serve the web UI on 127.0.0.1 with your own credentials (every namespace unless -n is given)',
    )
    .option('--port <port>', 'port on 127.0.0.1 (0 picks a free one)', '9095')
    .option('--no-open', 'print the URL without opening a browser')
    .option(
      '--in-cluster',
      'serve many users from inside the cluster (docs/ui.md): reads as this process, actions as the signed-in user',
    )
    .option('--listen <host:port>', 'with --in-cluster: where to listen', '0.0.0.0:9090')
    .option(
      '--auth <mode>',
      "with --in-cluster: 'token' (sign in with a Kubernetes token, checked by TokenReview) or 'proxy' (X-Remote-User from an authenticating proxy)",
      'token',
    )
    .option(
      '--proxy-secret-file <file>',
      'with --auth proxy: the secret the proxy sends in X-Mooring-Proxy-Secret; X-Remote-User is believed only with it',
    )
    .option(
      '--allowed-origin <origin>',
      'with --in-cluster: the origin writes must come from (default: the Host asked for)',
    )
    .action(async (flags: UiFlags, cmd: Command) => {
      const { CliError, EXIT_ERROR } = await import('../cli-error.ts');
      const { startUiServer } = await import('../ui/ui-server.ts');
      if (flags.inCluster) return serveInCluster(flags, cmd);
      if (!/^\d+$/.test(flags.port) || Number(flags.port) > 65535)
        throw new CliError(
          `--port '${flags.port}' is not a port number: write e.g. --port 9095.`,
          EXIT_ERROR,
        );
      const session = sessionOf(cmd);
      const client = await session.client();
      const namespace = cmd.optsWithGlobals<{ namespace?: string }>().namespace;
      let server: Awaited<ReturnType<typeof startUiServer>>;
      try {
        server = await startUiServer({ client, namespace, port: Number(flags.port) });
      } catch (err) {
        session.close();
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
          throw new CliError(
            `port ${flags.port} on 127.0.0.1 is taken: pass --port 0 or another port.`,
            EXIT_ERROR,
          );
        throw err;
      }
      process.stdout.write(
        `mooring ui: ${server.url}\n(the token in the URL lets only you in; Ctrl-C stops it)\n`,
      );
      if (flags.open) openBrowser(server.url);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      session.close();
    });
}

// The desktop's own opener; without one the printed URL is enough.
function openBrowser(url: string): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  import('node:child_process')
    .then(({ spawn }) => {
      const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
      child.on('error', () => undefined);
      child.unref();
    })
    .catch(() => undefined);
}

/** `mooring ui --in-cluster`: the UI for every user of the cluster, until SIGTERM. */
async function serveInCluster(flags: UiFlags, cmd: Command): Promise<void> {
  const { serveInCluster: serve } = await import('../ui/in-cluster-serve.ts');
  await serve({
    session: sessionOf(cmd),
    namespace: cmd.optsWithGlobals<{ namespace?: string }>().namespace,
    listen: flags.listen ?? '',
    auth: flags.auth,
    proxySecretFile: flags.proxySecretFile,
    allowedOrigin: flags.allowedOrigin,
  });
}
