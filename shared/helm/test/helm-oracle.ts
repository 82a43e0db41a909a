// The reference: bin/helm, helm v3.22.0 built with Helm's release ldflags (hack/lib/build-helm.sh),
// run as `helm template` with a private HOME and nothing else in its environment.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RenderOptions } from '../src/index.ts';

const repo = resolve(import.meta.dirname, '../../..');
export const HELM = join(repo, 'bin/helm');
export const WASM = join(repo, 'bin/mooring-helm.wasm');
export const TESTDATA = join(import.meta.dirname, 'testdata');

/**
 * Fails the test file at once when the binaries are not built: a skipped fidelity or sandbox test
 * would prove nothing. `npm test` builds them (hack/lib/build-helm.sh); calling this makes a file
 * an integration test (hack/lib/test-files.ts), which `npm run test:unit` leaves out.
 */
export function requireHelmBinaries(): void {
  for (const file of [HELM, WASM]) {
    if (!existsSync(file))
      throw new Error(`${file} is missing: run bash hack/lib/build-helm.sh (npm test builds it)`);
  }
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `helm template` with the flags that mean what `opts` means to renderChart. */
export function helmTemplate(opts: Omit<RenderOptions, 'limits'>): Promise<HelmResult> {
  const home = mkdtempSync(join(tmpdir(), 'mooring-helm-oracle-'));
  const args = ['template', opts.releaseName, opts.chartDir, '--namespace', opts.namespace];
  (opts.values ?? []).forEach((v, i) => {
    const file = join(home, `values-${i}.yaml`);
    writeFileSync(file, typeof v === 'string' ? v : JSON.stringify(v));
    args.push('--values', file);
  });
  for (const s of opts.setJSON ?? []) args.push('--set-json', s);
  for (const s of opts.set ?? []) args.push('--set', s);
  for (const s of opts.setString ?? []) args.push('--set-string', s);
  if (opts.kubeVersion) args.push('--kube-version', opts.kubeVersion);
  for (const a of opts.apiVersions ?? []) args.push('--api-versions', a);
  if (opts.includeCrds) args.push('--include-crds');
  if (opts.isUpgrade) args.push('--is-upgrade');
  if (opts.skipTests) args.push('--skip-tests');
  return new Promise((done) => {
    execFile(
      HELM,
      args,
      { env: { HOME: home, PATH: '/usr/bin:/bin' }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        rmSync(home, { recursive: true, force: true });
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

const RENDERER_MODULE = join(repo, 'hack/tools/helm-renderer');

/**
 * `go test ./helm-overlay/...` in the renderer's module: the renderer's changes to Helm's own code
 * (hack/lib/build-helm.sh copies them in) against the Helm code they stand in for, natively.
 */
export function goTestHelmOverlays(): Promise<HelmResult> {
  return new Promise((done) => {
    execFile(
      'go',
      ['test', '-count=1', './helm-overlay/...'],
      { cwd: RENDERER_MODULE, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}
