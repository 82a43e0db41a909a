import type { KubeClient, KubeObject } from '@mooring/runtime';
import type { Command } from 'commander';
import type { CheckStep } from '../check-operators.ts';
import { sessionOf } from '../session.ts';

const INSTALL_NAMESPACE = 'mooring-system';

async function checks(client: KubeClient, namespace: string, pre: boolean): Promise<CheckStep[]> {
  const { CRD_NAMES, OPERATOR_DEPLOYMENTS } = await import('../install-manifests.ts');
  const { checkOperators } = await import('../check-operators.ts');
  const steps: CheckStep[] = [];
  const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
  steps.push({ state: 'ok', text: `Kubernetes ${version.gitVersion}` });
  if (pre) return steps;
  for (const name of CRD_NAMES) {
    const crd = await client.getOrUndefined({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name,
    });
    const conditions = (crd?.status as { conditions?: { type: string; status: string }[] } | undefined)
      ?.conditions;
    const established = conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    steps.push({
      state: established ? 'ok' : 'fail',
      text: `CRD ${name} ${!crd ? "not found: run 'mooring install'" : established ? 'established' : 'not established yet'}`,
    });
  }
  steps.push(...(await checkOperators(client, namespace, OPERATOR_DEPLOYMENTS)));
  return steps;
}

const MARK: Record<CheckStep['state'], string> = { ok: '✔', warn: '⚠', fail: '✗' };

/** `install`, `check` and `uninstall`. */
export function registerInstall(program: Command): void {
  program
    .command('install')
    .description('install or upgrade Mooring (config/) in the cluster; --export prints the manifests instead')
    .option('--export', 'print the manifests as YAML instead of applying them')
    .option('--version <tag>', 'operator image tag (default: this CLI version)')
    .option(
      '--registry <host/path>',
      'pull the operator image from this registry (a mirror or private registry)',
    )
    .option('--image-pull-secret <name>', 'an existing docker-registry Secret in mooring-system to pull with')
    .option('--wait', 'wait until every operator Deployment has rolled out')
    .option('--timeout <duration>', 'how long --wait waits', '5m')
    .action(
      async (
        flags: {
          export?: boolean;
          version?: string;
          wait?: boolean;
          timeout: string;
          registry?: string;
          imagePullSecret?: string;
        },
        cmd: Command,
      ) => {
        const { installManifests } = await import('../install-manifests.ts');
        const { applyInstall } = await import('../install-apply.ts');
        const { cliVersion } = await import('./version.ts');
        const { objectsToYAML } = await import('../render-local.ts');
        const { imageSource } = await import('../image-source.ts');
        const objects = await installManifests(
          flags.version ?? `v${cliVersion()}`,
          undefined,
          imageSource(flags.registry, flags.imagePullSecret),
        );
        if (flags.export) {
          process.stdout.write(objectsToYAML(objects));
          return;
        }
        await sessionOf(cmd).use(async (client) => {
          await applyInstall(client, objects);
          if (flags.wait) {
            const { OPERATOR_DEPLOYMENTS } = await import('../install-manifests.ts');
            const { waitForDeployments } = await import('../wait-deployments.ts');
            const { parseDuration } = await import('@mooring/runtime');
            await waitForDeployments(
              client,
              INSTALL_NAMESPACE,
              OPERATOR_DEPLOYMENTS,
              parseDuration(flags.timeout),
            );
            process.stdout.write(`✔ Mooring installed in ${INSTALL_NAMESPACE} and running\n`);
            return;
          }
          process.stdout.write(
            `✔ Mooring installed in ${INSTALL_NAMESPACE}: run 'mooring check' to see the operators start\n`,
          );
        });
      },
    );

  program
    .command('check')
    .description(
      'check the API server, the CRDs and each operator: its Deployment, else the local operators (exit 1 unless all pass)',
    )
    .option('--pre', 'only check that the cluster is reachable, before install')
    .action(async (flags: { pre?: boolean }, cmd: Command) => {
      const session = sessionOf(cmd);
      // The operators live in mooring-system whatever the context's namespace; -n overrides.
      const namespace = session.options.namespace ?? INSTALL_NAMESPACE;
      await session.use(async (client) => {
        const steps = await checks(client, namespace, !!flags.pre);
        for (const s of steps) process.stdout.write(`${MARK[s.state]} ${s.text}\n`);
        // A warning is no pass either: pods on kwok's fake nodes look Ready and run nothing.
        if (steps.some((s) => s.state !== 'ok')) {
          process.stderr.write('✗ check failed\n');
          process.exitCode = 1;
        } else process.stdout.write('✔ all checks passed\n');
      });
    });

  program
    .command('uninstall')
    .description(
      'remove the operators, every Mooring object (finalizers dropped), the CRDs and the namespace',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--dry-run', 'print what would be removed, remove nothing')
    .option('--timeout <duration>', 'how long to wait for the namespace and CRDs to be gone', '5m')
    .action(async (flags: { yes?: boolean; dryRun?: boolean; timeout: string }, cmd: Command) => {
      const { KINDS } = await import('@mooring/api');
      const { apiVersionOf } = await import('../kinds.ts');
      const { confirm } = await import('../confirm.ts');
      const { installManifests, isFoundation } = await import('../install-manifests.ts');
      const objects = await installManifests(undefined);
      await sessionOf(cmd).use(async (client) => {
        if (!flags.dryRun)
          await confirm('uninstall Mooring and delete every Mooring object in the cluster?', flags.yes);
        const verb = flags.dryRun ? 'would delete' : 'deleted';
        const remove = async (obj: KubeObject): Promise<void> => {
          const key = {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            namespace: obj.metadata.namespace,
            name: obj.metadata.name!,
          };
          if (flags.dryRun) {
            if (!(await client.getOrUndefined(key))) return;
          } else if (!(await client.delete(key))) return;
          const ns = obj.metadata.namespace ? `${obj.metadata.namespace}/` : '';
          process.stdout.write(`${verb} ${obj.kind} ${ns}${obj.metadata.name}\n`);
        };
        // Operators first, so nothing re-adds a finalizer while objects go.
        for (const obj of objects.filter((o) => o.kind === 'Deployment')) await remove(obj);
        for (const def of KINDS) {
          const list = await client
            .list(apiVersionOf(def), def.kind)
            .catch(() => ({ items: [] as KubeObject[] }));
          for (const obj of list.items) {
            const key = {
              apiVersion: apiVersionOf(def),
              kind: def.kind,
              namespace: obj.metadata.namespace,
              name: obj.metadata.name!,
            };
            if (!flags.dryRun && obj.metadata.finalizers?.length)
              await client.mergePatch(key, { metadata: { finalizers: null } });
            await remove(obj);
          }
        }
        for (const obj of objects.filter((o) => o.kind !== 'Deployment' && !isFoundation(o)).reverse())
          await remove(obj);
        for (const obj of objects.filter(isFoundation).reverse()) await remove(obj);
        if (flags.dryRun) {
          process.stdout.write('✔ dry run: nothing was removed\n');
          return;
        }
        // Until the namespace and CRDs are gone, an install would meet them terminating.
        const { waitForRemoval } = await import('../wait-removed.ts');
        const { parseDuration } = await import('@mooring/runtime');
        await waitForRemoval(client, objects.filter(isFoundation), parseDuration(flags.timeout));
        process.stdout.write('✔ Mooring uninstalled\n');
      });
    });
}
