import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { KubeObject } from '@mooring/runtime';
import { stringify } from 'yaml';
import type { SshAccess } from './bootstrap-ssh.ts';
import { CliError } from './cli-error.ts';

/** Where bootstrap writes and what it points the cluster at. */
export interface BootstrapTarget {
  url: string;
  branch: string;
  /** Folder in the repository for this cluster, e.g. `clusters/prod`. */
  path: string;
  /** HTTP basic credentials; sent as a header, never written into a URL or a file. */
  auth?: { username: string; password: string };
  /** For ssh:// URLs: the key and known_hosts git's ssh uses (written to 0600 temp files only). */
  ssh?: SshAccess;
  secretName?: string;
  author: { name: string; email: string };
}

/** The GitRepository and Kustomization through which Mooring manages itself from `target`. */
export function syncObjects(target: BootstrapTarget): KubeObject[] {
  const path = target.path.replace(/^\.?\/*/, '').replace(/\/+$/, '');
  return [
    {
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { name: 'mooring-system', namespace: 'mooring-system' },
      spec: {
        url: target.url,
        interval: '1m',
        ref: { branch: target.branch },
        ...(target.secretName ? { secretRef: { name: target.secretName } } : {}),
      },
    },
    {
      apiVersion: 'kustomize.mooring.dev/v1',
      kind: 'Kustomization',
      metadata: { name: 'mooring-system', namespace: 'mooring-system' },
      spec: {
        interval: '10m',
        path: `./${path}`,
        prune: true,
        sourceRef: { kind: 'GitRepository', name: 'mooring-system' },
      },
    },
  ];
}

const run = promisify(execFile);

async function git(
  args: string[],
  cwd: string,
  target: BootstrapTarget,
  sshEnv: Record<string, string> = {},
): Promise<string> {
  const auth = target.auth
    ? [
        '-c',
        `http.extraHeader=Authorization: Basic ${Buffer.from(`${target.auth.username}:${target.auth.password}`).toString('base64')}`,
      ]
    : [];
  try {
    const { stdout } = await run('git', [...auth, ...args], {
      cwd,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...sshEnv },
    });
    return stdout;
  } catch (err) {
    if (target.ssh) throw await sshGitError(args[0], err, target, target.ssh);
    // git's own message names the remote and the reason; the auth header is never part of it.
    const stderr = String((err as { stderr?: string }).stderr ?? '')
      .trim()
      .split('\n')
      .pop();
    throw new CliError(
      `git ${args[0]} failed for ${target.url} (${(stderr || (err as Error).message).replace(/\.$/, '')}): check the URL, the branch and the credentials (--username with --password or $MOORING_GIT_PASSWORD).`,
    );
  }
}

/** git over ssh failed: the key sentences first, else ssh's or git's first line (the last is boilerplate). */
async function sshGitError(
  command: string | undefined,
  err: unknown,
  target: BootstrapTarget,
  access: SshAccess,
): Promise<CliError> {
  const { firstLine, sshFailureSentence } = await import('./bootstrap-ssh.ts');
  const stderr = String((err as { stderr?: string }).stderr ?? '') || (err as Error).message;
  return new CliError(
    sshFailureSentence(stderr, access) ??
      `git ${command} failed for ${target.url} (${firstLine(stderr)}): check the URL, the branch and the deploy key.`,
  );
}

/**
 * Writes `<path>/mooring-system/{components,sync,kustomization}.yaml` to the branch and pushes
 * when anything changed. Returns the pushed commit, or undefined when the repository was current.
 */
export async function pushManifests(
  target: BootstrapTarget,
  componentsYaml: string,
): Promise<string | undefined> {
  if (!target.ssh) return pushFrom(target, componentsYaml, {});
  const { withGitSsh } = await import('./bootstrap-ssh.ts');
  return withGitSsh(target.ssh, (sshEnv) => pushFrom(target, componentsYaml, sshEnv));
}

async function pushFrom(
  target: BootstrapTarget,
  componentsYaml: string,
  sshEnv: Record<string, string>,
): Promise<string | undefined> {
  const work = await mkdtemp(join(tmpdir(), 'mooring-bootstrap-'));
  try {
    await git(['init', '-q', `--initial-branch=${target.branch}`], work, target, sshEnv);
    await git(['remote', 'add', 'origin', target.url], work, target, sshEnv);
    const remoteHasBranch =
      (await git(['ls-remote', '--heads', 'origin', target.branch], work, target, sshEnv)).trim() !== '';
    if (remoteHasBranch) {
      await git(['fetch', '-q', '--depth=1', 'origin', target.branch], work, target, sshEnv);
      await git(['checkout', '-q', '-B', target.branch, 'FETCH_HEAD'], work, target, sshEnv);
    }
    const dir = join(work, target.path, 'mooring-system');
    const files: Record<string, string> = {
      'components.yaml': componentsYaml,
      'sync.yaml': syncObjects(target)
        .map((o) => `---\n${stringify(o)}`)
        .join(''),
      'kustomization.yaml':
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - components.yaml\n  - sync.yaml\n',
    };
    let changed = false;
    for (const [name, text] of Object.entries(files)) {
      const file = join(dir, name);
      const old = await readFile(file, 'utf8').catch(() => undefined);
      if (old === text) continue;
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      changed = true;
    }
    if (!changed) return undefined;
    await git(['add', '-A'], work, target, sshEnv);
    await git(
      [
        '-c',
        `user.name=${target.author.name}`,
        '-c',
        `user.email=${target.author.email}`,
        'commit',
        '-q',
        '-m',
        `Add Mooring ${target.path}/mooring-system manifests`,
      ],
      work,
      target,
      sshEnv,
    );
    await git(['push', '-q', 'origin', `HEAD:refs/heads/${target.branch}`], work, target, sshEnv);
    return (await git(['rev-parse', 'HEAD'], work, target, sshEnv)).trim();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
