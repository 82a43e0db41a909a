// A real Git repository with two commits for `mooring plan` tests: a base commit and a head commit
// that adds, changes and deletes objects in several Kustomizations and a HelmRelease, breaks one,
// deletes most of one folder, and leaves one untouched.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const REMOTE = 'https://git.example/acme/platform.git';
export const BASE_PASSWORD = 'hunter2-base-value';
export const HEAD_PASSWORD = 'correct-horse-head-value';

export interface PlanRepo {
  dir: string;
  base: string;
  head: string;
  remove: () => void;
}

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.test',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.test',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  }).trim();

function write(root: string, files: Record<string, string | null>): void {
  for (const [path, text] of Object.entries(files)) {
    const abs = join(root, path);
    if (text === null) rmSync(abs, { force: true });
    else {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, text);
    }
  }
}

const ks = (name: string, path: string, extra = '', source = 'platform'): string => `---
apiVersion: kustomize.mooring.dev/v1
kind: Kustomization
metadata: {name: ${name}, namespace: default}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: ${source}}
  path: ${path}
  prune: true
${extra}`;

const cm = (name: string, data = 'v1'): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: apps}\ndata: {key: ${data}}\n`;

const kustomization = (resources: string[]): string =>
  `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${resources.map((r) => `  - ${r}`).join('\n')}\n`;

const deployment = (image: string): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: model-server, namespace: apps}
spec:
  replicas: \${replicas}
  selector: {matchLabels: {app: model-server}}
  template:
    metadata: {labels: {app: model-server}}
    spec:
      containers: [{name: server, image: ${image}}]
`;

const secret = (password: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: model-registry, namespace: apps}\nstringData: {password: ${password}}\n`;

const chartValues = (replicas: number): string => `replicaCount: ${replicas}\n`;

const BASE: Record<string, string> = {
  'clusters/demo/sources.yaml': `apiVersion: source.mooring.dev/v1
kind: GitRepository
metadata: {name: platform, namespace: default}
spec: {url: ${REMOTE}, interval: 1m, ref: {branch: main}}
`,
  'clusters/demo/apps.yaml': [
    ks('apps', './apps/staging', '  postBuild:\n    substitute: {replicas: "2"}\n'),
    ks('infra', './infra'),
    ks('bulk', './bulk'),
    ks('other', './other'),
    ks('foreign', './apps/staging', '', 'someone-elses-repo'),
  ].join(''),
  'clusters/demo/broken.yaml': ks('broken', './broken'),
  'clusters/demo/release.yaml': `apiVersion: helm.mooring.dev/v2
kind: HelmRelease
metadata: {name: agent, namespace: default}
spec:
  interval: 10m
  targetNamespace: apps
  chart:
    spec:
      chart: ./charts/agent
      sourceRef: {kind: GitRepository, name: platform}
  values: {image: agent:1.0}
`,
  'base/app/kustomization.yaml': kustomization(['deployment.yaml']),
  'base/app/deployment.yaml': deployment('registry.example/model-server:1.0.0'),
  'apps/staging/kustomization.yaml': kustomization(['../../base/app', 'secret.yaml']),
  'apps/staging/secret.yaml': secret(BASE_PASSWORD),
  'infra/kustomization.yaml': kustomization(['namespace.yaml', 'settings.yaml']),
  'infra/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n',
  'infra/settings.yaml': cm('settings'),
  'bulk/kustomization.yaml': kustomization(['a.yaml', 'b.yaml', 'c.yaml', 'd.yaml']),
  'bulk/a.yaml': cm('a'),
  'bulk/b.yaml': cm('b'),
  'bulk/c.yaml': cm('c'),
  'bulk/d.yaml': cm('d'),
  // Broken at both revisions and untouched by the change: rendering it would report an error.
  'other/kustomization.yaml': kustomization(['missing-file.yaml']),
  'broken/kustomization.yaml': kustomization(['ok.yaml']),
  'broken/ok.yaml': cm('ok'),
  'charts/agent/Chart.yaml': 'apiVersion: v2\nname: agent\nversion: 0.1.0\n',
  'charts/agent/values.yaml': chartValues(1),
  'charts/agent/templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: {{ .Values.image | quote }}}]}
`,
};

const HEAD: Record<string, string | null> = {
  'base/app/deployment.yaml': deployment('registry.example/model-server:1.1.0'),
  'apps/staging/secret.yaml': secret(HEAD_PASSWORD),
  'apps/staging/kustomization.yaml': kustomization(['../../base/app', 'secret.yaml', 'flags.yaml']),
  'apps/staging/flags.yaml': cm('flags'),
  'infra/kustomization.yaml': kustomization(['namespace.yaml']),
  'infra/settings.yaml': null,
  'bulk/kustomization.yaml': kustomization(['a.yaml']),
  'bulk/b.yaml': null,
  'bulk/c.yaml': null,
  'bulk/d.yaml': null,
  'broken/kustomization.yaml': kustomization(['ok.yaml', 'not-there.yaml']),
  'charts/agent/values.yaml': chartValues(3),
};

/** Creates the repository: `base` and `head` are the two commits' SHAs. */
export function createPlanRepo(): PlanRepo {
  const dir = mkdtempSync(join(tmpdir(), 'mooring-plan-repo-'));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'remote', 'add', 'origin', REMOTE.replace(/\.git$/, ''));
  write(dir, BASE);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  const base = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'checkout', '-q', '-b', 'change');
  write(dir, HEAD);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'head');
  const head = git(dir, 'rev-parse', 'HEAD');
  return { dir, base, head, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
