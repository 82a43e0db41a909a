// How long `mooring plan` takes on a repository of 200 Kustomizations (each a folder with its own
// Deployment, Service and ConfigMap over one shared base, postBuild variables substituted), for a
// change that reaches all of them (the shared base) and one that reaches one. Each run is a fresh
// CLI process from the bundle, as CI runs it; peak RSS from GNU time when present.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../hack/lib/control-plane.ts';

const COUNT = 200;
const RUNS = 3;
const BIN = join(repoRoot, 'cli/bin/mooring.js');
const GNU_TIME = '/usr/bin/time';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
    encoding: 'utf8',
  }).trim();

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

const app = (i: number, image: string): Record<string, string> => {
  const n = `app-${String(i).padStart(3, '0')}`;
  return {
    [`apps/${n}/kustomization.yaml`]: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${n}
namePrefix: ${n}-
resources: [../../base/common, deployment.yaml, service.yaml]
configMapGenerator:
  - name: settings
    literals: ['MODEL=${n}', 'REPLICAS=\${replicas}']
`,
    [`apps/${n}/deployment.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  replicas: \${replicas}
  selector: {matchLabels: {app: ${n}}}
  template:
    metadata: {labels: {app: ${n}}}
    spec:
      containers: [{name: server, image: ${image}, ports: [{containerPort: 8080}]}]
`,
    [`apps/${n}/service.yaml`]: `apiVersion: v1
kind: Service
metadata: {name: server}
spec: {selector: {app: ${n}}, ports: [{port: 80, targetPort: 8080}]}
`,
  };
};

const common = (level: string): Record<string, string> => ({
  'base/common/kustomization.yaml': 'resources: [limits.yaml]\n',
  'base/common/limits.yaml': `apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec: {limits: [{type: Container, default: {memory: ${level}}}]}
`,
});

const declarations = (): string =>
  Array.from(
    { length: COUNT },
    (_, i) => `---
apiVersion: kustomize.mooring.dev/v1
kind: Kustomization
metadata: {name: app-${String(i).padStart(3, '0')}, namespace: default}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: platform}
  path: ./apps/app-${String(i).padStart(3, '0')}
  prune: true
  postBuild: {substitute: {replicas: "2"}}
`,
  ).join('');

const dir = mkdtempSync(join(tmpdir(), 'mooring-plan-bench-'));
try {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'remote', 'add', 'origin', 'https://git.example/acme/fleet');
  const files: Record<string, string> = {
    'clusters/prod/source.yaml':
      'apiVersion: source.mooring.dev/v1\nkind: GitRepository\nmetadata: {name: platform, namespace: default}\nspec: {url: https://git.example/acme/fleet.git, interval: 1m}\n',
    'clusters/prod/apps.yaml': declarations(),
    ...common('256Mi'),
  };
  for (let i = 0; i < COUNT; i++) Object.assign(files, app(i, 'registry.example/server:1.0.0'));
  write(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  git(dir, 'branch', 'one');
  git(dir, 'branch', 'all');
  git(dir, 'checkout', '-q', 'one');
  write(dir, app(7, 'registry.example/server:1.1.0'));
  git(dir, 'commit', '-q', '-am', 'one app');
  git(dir, 'checkout', '-q', 'all');
  write(dir, common('512Mi'));
  git(dir, 'commit', '-q', '-am', 'shared base');

  const runOnce = (head: string): { ms: number; rssMb?: number; cpuS?: number; rendered: number } => {
    const timed = existsSync(GNU_TIME);
    const args = [BIN, 'plan', '--repo', dir, '--base', 'main', '--head', head, '--output', 'json'];
    const start = process.hrtime.bigint();
    const r = spawnSync(
      timed ? GNU_TIME : process.execPath,
      timed ? ['-f', '%M %U %S', process.execPath, ...args] : args,
      {
        encoding: 'utf8',
        maxBuffer: 256 << 20,
      },
    );
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 2)
      throw new Error(
        `plan --head ${head} exited ${r.status}: ${r.stderr}${r.stdout.match(/"error": ".*"/)?.[0] ?? ''}`,
      );
    const [rssKb, user, sys] = timed ? (r.stderr.trim().split('\n').pop() ?? '').split(' ').map(Number) : [];
    const rss = rssKb === undefined ? undefined : rssKb / 1024;
    const cpuS = user === undefined || sys === undefined ? undefined : user + sys;
    return {
      ms,
      rssMb: rss,
      cpuS,
      rendered: (JSON.parse(r.stdout) as { appliers: unknown[] }).appliers.length,
    };
  };
  runOnce('one'); // brings the CLI bundle up to date and warms the file cache
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const load = loadavg()[0]!.toFixed(2);
  const rows = [
    ['the shared base (reaches all 200)', 'all'],
    ['one app folder (reaches 1)', 'one'],
  ].map(([title, head]) => {
    const samples = Array.from({ length: RUNS }, () => runOnce(head!));
    const rss = samples[0]!.rssMb === undefined ? 'n/a' : median(samples.map((s) => s.rssMb!)).toFixed(0);
    const cpu = samples[0]!.cpuS === undefined ? 'n/a' : median(samples.map((s) => s.cpuS!)).toFixed(2);
    return `| ${title} | ${samples[0]!.rendered} | ${(median(samples.map((s) => s.ms)) / 1000).toFixed(2)} | ${cpu} | ${rss} |`;
  });

  process.stdout.write(`## \`mooring plan\` on 200 Kustomizations

What: wall time of one \`mooring plan --output json\` process (the CLI bundle) from spawn to exit, median of ${RUNS}
runs, with the process's CPU time (GNU time), which the machine's load moves less than wall time, on a generated repository of ${COUNT} Kustomizations (each a folder with a Deployment, a Service and a
generated ConfigMap over one shared base, namespace and name prefix set, postBuild variables substituted: 4 objects
each), declared in one file. Both commits are checked out with \`git archive\`, the Kustomizations found and matched
to the repository, and those the change reaches rendered at both commits through the operator's render steps.
${cpus().length} CPUs, load average ${load} when the run started.

| change | Kustomizations rendered (×2 commits) | wall time (s) | CPU, user + system (s) | peak RSS (MB) |
|---|---:|---:|---:|---:|
${rows.join('\n')}

Reproduce: \`npm run bench -- cli/bench/plan\`.
`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
