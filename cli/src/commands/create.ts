import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { applyOrExport, yamlDocument } from '../apply-or-export.ts';
import { CliError, EXIT_ERROR } from '../cli-error.ts';
import { CLI_FIELD_MANAGER, sessionOf } from '../session.ts';
import { registerHelmRelease } from './create-helmrelease.ts';

type Flags = Record<string, string | string[] | boolean | undefined>;
type Spec = Record<string, unknown>;

const GROUP = {
  source: 'source.mooring.dev/v1',
  kustomize: 'kustomize.mooring.dev/v1',
  notification: 'notification.mooring.dev/v1',
  image: 'image.mooring.dev/v1',
};

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `key=value` pairs from repeated flags, e.g. `--label team=a`. */
export function pairs(values: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq < 1)
      throw new CliError(`${flag} '${v}' is not key=value: write it as ${flag} name=value.`, EXIT_ERROR);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

/** `Kind/name` or `Kind/namespace/name` references, as Flux's `--source` and `--resource` take them. */
export function objectRef(value: string, flag: string): { kind: string; name: string; namespace?: string } {
  const parts = value.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !p))
    throw new CliError(
      `${flag} '${value}' is not Kind/name: write it as ${flag} GitRepository/my-repo.`,
      EXIT_ERROR,
    );
  const [kind, a, b] = parts as [string, string, string | undefined];
  return b === undefined ? { kind, name: a } : { kind, namespace: a, name: b };
}

/** Drops undefined fields so exported YAML holds only what was set. */
function clean<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clean) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = clean(v);
      if (c === undefined) continue;
      if (c && typeof c === 'object' && !Array.isArray(c) && Object.keys(c).length === 0) continue;
      out[k] = c;
    }
    return out as T;
  }
  return value;
}

/** Adds the flags every create command has and the action that builds, then applies or exports. */
export function creator(
  parent: Command,
  name: string,
  description: string,
  configure: (cmd: Command) => Command,
  build: (
    flags: Flags,
  ) =>
    | { apiVersion: string; kind: string; spec?: Spec; extra?: Spec }
    | Promise<{ apiVersion: string; kind: string; spec?: Spec; extra?: Spec }>,
): Command {
  const cmd = parent.command(name).description(description).argument('<name>', 'object name');
  configure(cmd)
    .option('--label <key=value>', 'label to set (repeatable)', collect)
    .option('--export', 'print the object as YAML instead of applying it');
  cmd.action(async (objName: string, flags: Flags, self: Command) => {
    const session = sessionOf(self);
    const namespace = await session.namespace();
    const made = await build(flags);
    const obj = clean({
      apiVersion: made.apiVersion,
      kind: made.kind,
      metadata: { name: objName, namespace, labels: pairs(flags.label as string[] | undefined, '--label') },
      spec: made.spec,
      ...made.extra,
    });
    await applyOrExport(session, obj, !!flags.export);
  });
  return cmd;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const secretRef = (v: unknown): { name: string } | undefined => (str(v) ? { name: str(v)! } : undefined);

function registerSources(create: Command): void {
  const source = create.command('source').description('create or update a source');
  creator(
    source,
    'git',
    'create or update a GitRepository',
    (c) =>
      c
        .requiredOption('--url <url>', 'Git repository URL (https:// or ssh://)')
        .option('--branch <branch>', 'branch to follow')
        .option('--tag <tag>', 'tag to follow')
        .option('--tag-semver <range>', 'semver range of tags to follow')
        .option('--commit <sha>', 'commit to pin')
        .option('--ref-name <ref>', 'full Git reference, e.g. refs/pull/1/head')
        .option('--secret-ref <name>', 'Secret with credentials')
        .option('--ignore-paths <patterns>', '.gitignore-style paths to leave out of the artifact')
        .option('--interval <duration>', 'how often to check for new commits', '1m')
        .option('--timeout <duration>', 'timeout of Git operations'),
    (f) => {
      if (!f.branch && !f.tag && !f.tagSemver && !f.commit && !f.refName) f.branch = 'main';
      return {
        apiVersion: GROUP.source,
        kind: 'GitRepository',
        spec: {
          url: f.url,
          interval: f.interval,
          timeout: f.timeout,
          ref: { branch: f.branch, tag: f.tag, semver: f.tagSemver, commit: f.commit, name: f.refName },
          secretRef: secretRef(f.secretRef),
          ignore: f.ignorePaths,
        },
      };
    },
  );
  creator(
    source,
    'oci',
    'create or update an OCIRepository',
    (c) =>
      c
        .requiredOption('--url <url>', 'OCI repository URL (oci://registry/repo)')
        .option('--tag <tag>', 'tag to follow', undefined)
        .option('--tag-semver <range>', 'semver range of tags to follow')
        .option('--digest <digest>', 'digest to pin')
        .option('--secret-ref <name>', 'Secret with registry credentials')
        .option('--insecure', 'allow plain HTTP registries')
        .option('--interval <duration>', 'how often to check for new artifacts', '1m'),
    (f) => ({
      apiVersion: GROUP.source,
      kind: 'OCIRepository',
      spec: {
        url: f.url,
        interval: f.interval,
        ref: {
          tag: f.tag ?? (f.tagSemver || f.digest ? undefined : 'latest'),
          semver: f.tagSemver,
          digest: f.digest,
        },
        secretRef: secretRef(f.secretRef),
        insecure: f.insecure ? true : undefined,
      },
    }),
  );
  registerHelmSources(source);
}

const HELM_CHART_SOURCES = ['HelmRepository', 'GitRepository', 'OCIRepository'];

/** `--source Kind/name` of a HelmChart: the kind in any case, as Flux's `create source chart` takes it. */
function chartSourceRef(value: string): { kind: string; name: string } {
  const ref = objectRef(value, '--source');
  const kind = HELM_CHART_SOURCES.find((k) => k.toLowerCase() === ref.kind.toLowerCase());
  if (!kind || ref.namespace !== undefined)
    throw new CliError(
      `--source '${value}' is not a chart source: use ${HELM_CHART_SOURCES.join(', ')}/<name> in the chart's namespace, e.g. --source HelmRepository/${ref.name}.`,
      EXIT_ERROR,
    );
  return { kind, name: ref.name };
}

function registerHelmSources(source: Command): void {
  creator(
    source,
    'helm',
    'create or update a HelmRepository (type oci for an oci:// URL)',
    (c) =>
      c
        .requiredOption('--url <url>', 'chart repository URL (https://…, or oci://registry/path)')
        .option('--secret-ref <name>', 'Secret with username and password, or bearerToken')
        .option('--cert-secret-ref <name>', 'Secret with ca.crt, tls.crt and tls.key')
        .option('--pass-credentials', 'send the credentials to chart URLs on other hosts')
        .option('--interval <duration>', 'how often to fetch the index', '1m')
        .option('--timeout <duration>', 'timeout of the index fetch'),
    (f) => ({
      apiVersion: GROUP.source,
      kind: 'HelmRepository',
      spec: {
        url: f.url,
        type: str(f.url)?.startsWith('oci://') ? 'oci' : undefined,
        interval: f.interval,
        timeout: f.timeout,
        secretRef: secretRef(f.secretRef),
        certSecretRef: secretRef(f.certSecretRef),
        passCredentials: f.passCredentials ? true : undefined,
      },
    }),
  );
  creator(
    source,
    'chart',
    'create or update a HelmChart',
    (c) =>
      c
        .requiredOption(
          '--source <Kind/name>',
          'HelmRepository/<name>, GitRepository/<name> or OCIRepository/<name>',
        )
        .requiredOption('--chart <name-or-path>', 'chart name (HelmRepository) or path to the chart folder')
        .option('--chart-version <range>', 'SemVer range of the chart version (HelmRepository)')
        .option('--reconcile-strategy <strategy>', 'ChartVersion or Revision')
        .option('--values <file>', 'values file to merge, in order (repeatable)', collect)
        .option('--interval <duration>', 'how often to check the source', '1m'),
    (f) => {
      const strategy = str(f.reconcileStrategy);
      if (strategy && strategy !== 'ChartVersion' && strategy !== 'Revision')
        throw new CliError(`--reconcile-strategy '${strategy}' is not ChartVersion or Revision.`, EXIT_ERROR);
      return {
        apiVersion: GROUP.source,
        kind: 'HelmChart',
        spec: {
          chart: f.chart,
          version: f.chartVersion,
          sourceRef: chartSourceRef(str(f.source)!),
          interval: f.interval,
          reconcileStrategy: strategy,
          valuesFiles: f.values,
        },
      };
    },
  );
}

function registerKustomization(create: Command): void {
  creator(
    create,
    'kustomization',
    'create or update a Kustomization',
    (c) =>
      c
        .alias('ks')
        .requiredOption(
          '--source <[Kind/]name>',
          'source, e.g. GitRepository/app, ocirepository/ns/app, or app for GitRepository/app',
        )
        .option('--path <path>', 'directory in the source', './')
        .option('--prune', 'delete objects removed from the source', false)
        .option('--no-prune', 'keep objects removed from the source')
        .option('--interval <duration>', 'how often to reconcile and correct drift', '10m')
        .option('--retry-interval <duration>', 'how soon to retry after a failure')
        .option('--timeout <duration>', 'timeout of build, apply and health checks')
        .option('--target-namespace <ns>', 'namespace set on every namespaced object')
        .option('--name-prefix <prefix>', 'prefix for every object name')
        .option('--name-suffix <suffix>', 'suffix for every object name')
        .option(
          '--depends-on <name>',
          'Kustomization that must be ready first, [ns/]name (repeatable)',
          collect,
        )
        .option('--wait', 'wait for every applied object to be healthy')
        .option('--service-account <name>', 'ServiceAccount to impersonate when applying')
        .option('--substitute <key=value>', 'postBuild variable (repeatable)', collect)
        .option(
          '--substitute-from <Kind/name>',
          'ConfigMap/name or Secret/name with variables (repeatable)',
          collect,
        )
        .option('--decryption-secret <name>', 'Secret with SOPS age keys'),
    async (f) => {
      const { parseSourceRef } = await import('../kinds.ts');
      const source = parseSourceRef(String(f.source));
      const deps = (f.dependsOn as string[] | undefined)?.map((d) => {
        const [a, b] = d.split('/');
        return b === undefined ? { name: a } : { namespace: a, name: b };
      });
      const from = (f.substituteFrom as string[] | undefined)?.map((r) => objectRef(r, '--substitute-from'));
      const substitute = pairs(f.substitute as string[] | undefined, '--substitute');
      return {
        apiVersion: GROUP.kustomize,
        kind: 'Kustomization',
        spec: {
          sourceRef: source,
          path: f.path,
          interval: f.interval,
          retryInterval: f.retryInterval,
          timeout: f.timeout,
          prune: !!f.prune,
          targetNamespace: f.targetNamespace,
          namePrefix: f.namePrefix,
          nameSuffix: f.nameSuffix,
          dependsOn: deps,
          wait: f.wait ? true : undefined,
          serviceAccountName: f.serviceAccount,
          postBuild:
            substitute || from
              ? { substitute, substituteFrom: from?.map((r) => ({ kind: r.kind, name: r.name })) }
              : undefined,
          decryption: f.decryptionSecret
            ? { provider: 'sops', secretRef: { name: f.decryptionSecret } }
            : undefined,
        },
      };
    },
  );
}

function registerNotification(create: Command): void {
  creator(
    create,
    'receiver',
    'create or update a Receiver (webhook that asks sources to reconcile)',
    (c) =>
      c
        .option('--type <type>', 'receiver type: generic, generic-hmac, github, gitlab, ...', 'generic')
        .option('--event <event>', 'event to accept, e.g. push (repeatable)', collect)
        .requiredOption('--resource <Kind/name>', 'object to reconcile on a webhook (repeatable)', collect)
        .requiredOption('--secret-ref <name>', 'Secret whose `token` signs the webhook'),
    (f) => ({
      apiVersion: GROUP.notification,
      kind: 'Receiver',
      spec: {
        type: f.type,
        events: f.event,
        resources: (f.resource as string[]).map((r) => objectRef(r, '--resource')),
        secretRef: { name: f.secretRef },
      },
    }),
  );
  creator(
    create,
    'alert',
    'create or update an Alert (which events go to which Provider)',
    (c) =>
      c
        .requiredOption('--provider-ref <name>', 'Provider to send events to')
        .requiredOption(
          '--event-source <Kind/name>',
          'object whose events to send, name may be * (repeatable)',
          collect,
        )
        .addOption(
          new Option('--event-severity <severity>', 'lowest severity to send').choices(['info', 'error']),
        )
        .option('--summary <text>', 'summary added to every event'),
    (f) => ({
      apiVersion: GROUP.notification,
      kind: 'Alert',
      spec: {
        providerRef: { name: f.providerRef },
        eventSources: (f.eventSource as string[]).map((r) => objectRef(r, '--event-source')),
        eventSeverity: f.eventSeverity,
        summary: f.summary,
      },
    }),
  );
  creator(
    create,
    'provider',
    'create or update a Provider (where alerts are sent)',
    (c) =>
      c
        .alias('alert-provider')
        .requiredOption('--type <type>', 'provider type: generic, generic-hmac, slack, github, ...')
        .option('--address <url>', 'webhook or API address')
        .option('--channel <channel>', 'channel, for chat providers')
        .option('--username <name>', 'bot user name, for chat providers')
        .option('--secret-ref <name>', 'Secret with the address or token'),
    (f) => ({
      apiVersion: GROUP.notification,
      kind: 'Provider',
      spec: {
        type: f.type,
        address: f.address,
        channel: f.channel,
        username: f.username,
        secretRef: secretRef(f.secretRef),
      },
    }),
  );
}

function registerImages(create: Command): void {
  const image = create.command('image').description('create or update image automation objects');
  creator(
    image,
    'repository',
    'create or update an ImageRepository (scans a registry for tags)',
    (c) =>
      c
        .requiredOption('--image <image>', 'image to scan, e.g. ghcr.io/org/app')
        .option('--secret-ref <name>', 'Secret with registry credentials')
        .option('--interval <duration>', 'how often to scan', '5m'),
    (f) => ({
      apiVersion: GROUP.image,
      kind: 'ImageRepository',
      spec: { image: f.image, interval: f.interval, secretRef: secretRef(f.secretRef) },
    }),
  );
  creator(
    image,
    'policy',
    'create or update an ImagePolicy (picks the latest tag)',
    (c) =>
      c
        .requiredOption('--image-ref <name>', 'ImageRepository to read tags from')
        .option('--select-semver <range>', 'pick the highest tag in a semver range')
        .addOption(
          new Option('--select-alpha <order>', 'pick by alphabetical order').choices(['asc', 'desc']),
        )
        .addOption(new Option('--select-numeric <order>', 'pick by numerical order').choices(['asc', 'desc']))
        .option('--filter-regex <regex>', 'only tags matching this pattern')
        .option('--filter-extract <template>', 'part of the tag to order by, e.g. $ts'),
    (f) => {
      const chosen = [f.selectSemver, f.selectAlpha, f.selectNumeric].filter(Boolean).length;
      if (chosen !== 1)
        throw new CliError(
          'choose exactly one of --select-semver, --select-alpha and --select-numeric.',
          EXIT_ERROR,
        );
      return {
        apiVersion: GROUP.image,
        kind: 'ImagePolicy',
        spec: {
          imageRepositoryRef: { name: f.imageRef },
          policy: {
            semver: f.selectSemver ? { range: f.selectSemver } : undefined,
            alphabetical: f.selectAlpha ? { order: f.selectAlpha } : undefined,
            numerical: f.selectNumeric ? { order: f.selectNumeric } : undefined,
          },
          filterTags: f.filterRegex ? { pattern: f.filterRegex, extract: f.filterExtract } : undefined,
        },
      };
    },
  );
  creator(
    image,
    'update',
    'create or update an ImageUpdateAutomation (commits new tags to Git)',
    (c) =>
      c
        .requiredOption('--git-repo-ref <name>', 'GitRepository to commit to')
        .option('--checkout-branch <branch>', 'branch to check out')
        .option('--push-branch <branch>', 'branch to push to (the checkout branch by default)')
        .option('--author-name <name>', 'commit author name', 'mooring')
        .requiredOption('--author-email <email>', 'commit author email')
        .option('--commit-template <template>', 'commit message template')
        .option('--git-repo-path <path>', 'directory whose image setters are updated', './')
        .option('--interval <duration>', 'how often to run', '30m'),
    (f) => ({
      apiVersion: GROUP.image,
      kind: 'ImageUpdateAutomation',
      spec: {
        sourceRef: { kind: 'GitRepository', name: f.gitRepoRef },
        interval: f.interval,
        git: {
          checkout: f.checkoutBranch ? { ref: { branch: f.checkoutBranch } } : undefined,
          commit: { author: { name: f.authorName, email: f.authorEmail }, messageTemplate: f.commitTemplate },
          push: f.pushBranch ? { branch: f.pushBranch } : undefined,
        },
        update: { path: f.gitRepoPath, strategy: 'Setters' },
      },
    }),
  );
}

const readText = (file: string, flag: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read ${flag} ${file} (${(err as NodeJS.ErrnoException).code}): check the path.`,
      EXIT_ERROR,
    );
  }
};

function registerSecrets(create: Command): void {
  const secret = create.command('secret').description('create or update a Secret for a source');
  creator(
    secret,
    'git',
    'create or update a Secret with Git credentials (basic auth, bearer token or SSH key)',
    (c) =>
      c
        .option('--username <name>', 'HTTP basic auth user')
        .option('--password <password>', 'HTTP basic auth password')
        .option('--bearer-token <token>', 'HTTP bearer token')
        .option('--private-key-file <file>', 'SSH private key file')
        .option('--known-hosts-file <file>', 'SSH known_hosts file')
        .option('--ca-file <file>', 'CA certificate file for HTTPS'),
    (f) => {
      const data: Record<string, string | undefined> = {
        username: str(f.username),
        password: str(f.password),
        bearerToken: str(f.bearerToken),
        identity: f.privateKeyFile ? readText(String(f.privateKeyFile), '--private-key-file') : undefined,
        known_hosts: f.knownHostsFile ? readText(String(f.knownHostsFile), '--known-hosts-file') : undefined,
        'ca.crt': f.caFile ? readText(String(f.caFile), '--ca-file') : undefined,
      };
      if (!data.username && !data.bearerToken && !data.identity)
        throw new CliError('give --username/--password, --bearer-token or --private-key-file.', EXIT_ERROR);
      return { apiVersion: 'v1', kind: 'Secret', extra: { type: 'Opaque', stringData: data } };
    },
  );
  creator(
    secret,
    'oci',
    'create or update a registry pull Secret (kubernetes.io/dockerconfigjson)',
    (c) =>
      c
        .requiredOption('--url <registry>', 'registry host, e.g. ghcr.io')
        .requiredOption('--username <name>', 'registry user')
        .requiredOption('--password <password>', 'registry password or token'),
    (f) => {
      const registry = String(f.url)
        .replace(/^oci:\/\//, '')
        .split('/')[0]!;
      const auth = Buffer.from(`${f.username}:${f.password}`).toString('base64');
      const config = { auths: { [registry]: { username: f.username, password: f.password, auth } } };
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        extra: {
          type: 'kubernetes.io/dockerconfigjson',
          stringData: { '.dockerconfigjson': JSON.stringify(config) },
        },
      };
    },
  );
  creator(
    secret,
    'tls',
    'create or update a TLS Secret (kubernetes.io/tls) from a PEM certificate and its private key',
    (c) =>
      c
        .requiredOption('--cert-file <file>', 'PEM certificate (chain), stored as tls.crt')
        .requiredOption('--key-file <file>', 'PEM private key of the certificate, stored as tls.key')
        .option('--ca-crt-file <file>', 'PEM CA certificate, stored as ca.crt'),
    (f) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      extra: {
        type: 'kubernetes.io/tls',
        stringData: tlsData(String(f.certFile), String(f.keyFile), str(f.caCrtFile)),
      },
    }),
  );
}

/** A PEM file as a certificate, or a one-sentence error naming the file. */
function readCertificate(file: string, flag: string): { pem: string; cert: X509Certificate } {
  const pem = readText(file, flag);
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate block');
    return { pem, cert: new X509Certificate(pem) };
  } catch {
    throw new CliError(`${flag} ${file} is not a PEM certificate: pass the certificate file.`, EXIT_ERROR);
  }
}

/** The TLS Secret's data, once the key is known to belong to the certificate; errors never quote the key. */
function tlsData(certFile: string, keyFile: string, caFile: string | undefined): Record<string, string> {
  const { pem: certPem, cert } = readCertificate(certFile, '--cert-file');
  const keyPem = readText(keyFile, '--key-file');
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new CliError(
      `--key-file ${keyFile} is not an unencrypted PEM private key: pass the certificate's key, without a passphrase.`,
      EXIT_ERROR,
    );
  }
  if (!cert.checkPrivateKey(key))
    throw new CliError(
      `--key-file ${keyFile} does not match the certificate in ${certFile}: pass the key the certificate was issued for.`,
      EXIT_ERROR,
    );
  const data: Record<string, string> = { 'tls.crt': certPem, 'tls.key': keyPem };
  if (caFile) data['ca.crt'] = readCertificate(caFile, '--ca-crt-file').pem;
  return data;
}

/** `mooring create tenant`: Flux's multi-tenancy helper, several objects per namespace, so not a `creator`. */
function registerTenant(create: Command): void {
  create
    .command('tenant')
    .description(
      'create or update a tenant: per namespace, the Namespace, a ServiceAccount and a RoleBinding that confines reconciles to it',
    )
    .argument('<name>', 'tenant name, also the default ServiceAccount name')
    .requiredOption(
      '--with-namespace <ns>',
      'namespace of the tenant (repeatable, or comma-separated)',
      collect,
    )
    .option('--cluster-role <name>', 'ClusterRole granted inside each namespace', 'cluster-admin')
    .option('--account <name>', 'ServiceAccount for Kustomizations to impersonate (default: the tenant name)')
    .option('--label <key=value>', 'label to set (repeatable)', collect)
    .option('--export', 'print the objects as YAML instead of applying them')
    .action(async (tenant: string, flags: Flags, self: Command) => {
      const { tenantObjects } = await import('../tenant.ts');
      const objects = tenantObjects({
        tenant,
        namespaces: (flags.withNamespace as string[]).flatMap((v) => v.split(',')).filter(Boolean),
        clusterRole: String(flags.clusterRole),
        account: str(flags.account),
        labels: pairs(flags.label as string[] | undefined, '--label'),
      });
      if (flags.export) {
        for (const obj of objects) process.stdout.write(yamlDocument(obj));
        return;
      }
      await sessionOf(self).use(async (client) => {
        // In order: a namespace must exist before its ServiceAccount and RoleBinding.
        for (const obj of objects) {
          await client.apply(obj, { fieldManager: CLI_FIELD_MANAGER, force: true });
          const ns = obj.metadata.namespace ? `${obj.metadata.namespace}/` : '';
          process.stdout.write(`✔ ${obj.kind} ${ns}${obj.metadata.name} applied\n`);
        }
      });
    });
}

/** `mooring create …`: every kind from flags; `--export` prints YAML, otherwise it is applied. */
export function registerCreate(program: Command): void {
  const create = program.command('create').description('create or update Mooring objects from flags');
  registerSources(create);
  registerKustomization(create);
  registerHelmRelease(create);
  registerNotification(create);
  registerImages(create);
  registerSecrets(create);
  registerTenant(create);
}
