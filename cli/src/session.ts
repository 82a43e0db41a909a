import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeClient } from '@mooring/runtime';
import type { Command } from 'commander';
import { CliError } from './cli-error.ts';

/** The options every command inherits, as kubectl spells them. */
export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** The field manager of every write the CLI makes. */
export const CLI_FIELD_MANAGER = 'mooring-cli';

/** The kubeconfig to read: the flag, then $KUBECONFIG, then ~/.kube/config. */
export function kubeconfigPath(opts: GlobalOptions): string | undefined {
  if (opts.kubeconfig) return opts.kubeconfig;
  if (process.env.KUBECONFIG) return undefined; // loadFromDefault merges a KUBECONFIG path list
  const home = join(homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

// The runtime loads @kubernetes/client-node, seconds of start-up: only commands that talk to a cluster pay it.
type Runtime = typeof import('@mooring/runtime');
type KubeConfig = ReturnType<Runtime['loadKubeConfig']>;
const runtime = (): Promise<Runtime> => import('@mooring/runtime');

/** A connection to the cluster that the global options name, opened on first use. */
export class Session {
  readonly options: GlobalOptions;
  #kc: KubeConfig | undefined;
  #client: Promise<KubeClient> | undefined;

  constructor(options: GlobalOptions) {
    this.options = options;
  }

  async #config(): Promise<KubeConfig> {
    if (this.#kc) return this.#kc;
    const { loadKubeConfig } = await runtime();
    const path = kubeconfigPath(this.options);
    // Without any kubeconfig client-node falls back to http://localhost:8080 and then refuses it
    // for being plain HTTP; say what is really missing. In a pod it reads the service account.
    if (!path && !process.env.KUBECONFIG && !process.env.KUBERNETES_SERVICE_HOST)
      throw new CliError(
        `no kubeconfig found ($KUBECONFIG is not set and ${join(homedir(), '.kube', 'config')} does not exist): pass --kubeconfig <file>.`,
      );
    let kc: KubeConfig;
    try {
      kc = loadKubeConfig(path);
    } catch (err) {
      throw new CliError(
        `cannot read the kubeconfig ${path ?? '$KUBECONFIG'} (${(err as Error).message}): pass --kubeconfig <file>.`,
      );
    }
    if (this.options.context) {
      if (!kc.getContextObject(this.options.context)) {
        const names = kc.getContexts().map((c) => c.name);
        throw new CliError(
          `context '${this.options.context}' is not in the kubeconfig: use one of ${names.join(', ') || '(none)'}.`,
        );
      }
      kc.setCurrentContext(this.options.context);
    }
    if (!kc.getCurrentCluster())
      throw new CliError('the kubeconfig names no current cluster: pass --kubeconfig or --context.');
    this.#kc = kc;
    return kc;
  }

  /** The namespace to use: -n, else the context's, else `fallback`. */
  async namespace(fallback = 'default'): Promise<string> {
    if (this.options.namespace) return this.options.namespace;
    try {
      const kc = await this.#config();
      return kc.getContextObject(kc.getCurrentContext())?.namespace || fallback;
    } catch {
      return fallback;
    }
  }

  /** The API server the kubeconfig and --context name, or undefined when there is none to read. */
  async server(): Promise<string | undefined> {
    try {
      return (await this.#config()).getCurrentCluster()?.server;
    } catch {
      return undefined;
    }
  }

  /** The API client, created once. */
  client(): Promise<KubeClient> {
    this.#client ??= (async () => {
      const { HttpsTransport, KubeClient } = await runtime();
      const kc = await this.#config();
      let transport: Awaited<ReturnType<Runtime['HttpsTransport']['create']>>;
      try {
        transport = await HttpsTransport.create(kc);
      } catch (err) {
        const server = kc.getCurrentCluster()?.server;
        const message = (err as Error).message;
        if (/HTTP protocol is not allowed/.test(message))
          throw new CliError(
            `the kubeconfig's server ${server} is plain HTTP, which is refused unless its cluster sets insecure-skip-tls-verify: use the server's https:// address.`,
          );
        throw new CliError(
          `cannot use the kubeconfig's settings for ${server} (${message}): check --kubeconfig and --context.`,
        );
      }
      return new KubeClient(transport, { userAgent: 'mooring-cli', qps: 100, burst: 200 });
    })();
    return this.#client;
  }

  /** Runs `fn` with the client and namespace (`fallback` when none is set), then closes the client. */
  async use<T>(fn: (client: KubeClient, namespace: string) => Promise<T>, fallback = 'default'): Promise<T> {
    try {
      return await fn(await this.client(), await this.namespace(fallback));
    } finally {
      this.close();
    }
  }

  close(): void {
    this.#client?.then((c) => c.close()).catch(() => undefined);
  }
}

/** The session built from the global options as they were given to `cmd` or any parent. */
export function sessionOf(cmd: Command): Session {
  return new Session(cmd.optsWithGlobals<GlobalOptions>());
}
