// kustomize's `helmCharts:` through Mooring's sandboxed Helm engine, held to the oracle
// `bin/kustomize build --enable-helm --helm-command bin/helm` (kustomize v5.8.0, helm v3.22.0) byte
// for byte, on the cases in kustomize-helm/: each is an input tree, and a case.json naming the
// charts to copy into it (a vendored public chart, with its licence and SOURCE, from
// shared/helm/test/testdata/public-charts/, or the fixtures' own `toolbox` from _charts/), so no
// chart is stored twice. An error on one side and output on the other fails the case too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, createConfinedFs, KustomizeError, toYAML } from '@mooring/kustomize';
import { helmRenderer } from '../../operators/kustomize/src/render/helm-renderer.ts';
import { requireHelmBinaries, TESTDATA } from '../../shared/helm/test/helm-oracle.ts';

requireHelmBinaries();

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CASES = fileURLToPath(new URL('./kustomize-helm/', import.meta.url));
const KUSTOMIZE = join(ROOT, 'bin/kustomize');
const HELM = join(ROOT, 'bin/helm');
const limits = { timeoutMs: 180_000, memoryBytes: 1 << 30 };

interface Case {
  /** Destination (inside input/) → `toolbox` (from _charts/) or `public:<name>`. */
  charts: Record<string, string>;
  /** The directory to build, inside input/; default `.`. */
  entry?: string;
}

type Result = { ok: true; out: string } | { ok: false; err: string };

const work = mkdtempSync(join(tmpdir(), 'mooring-kustomize-helm-'));
after(() => rmSync(work, { recursive: true, force: true }));

function chartSource(source: string): string {
  if (source.startsWith('public:')) {
    const name = source.slice('public:'.length);
    return join(TESTDATA, 'public-charts', name, name);
  }
  return join(CASES, '_charts', source);
}

/** The case's input with its charts copied in, in a fresh directory. */
function materialise(name: string, c: Case): string {
  const dir = join(work, name);
  // Links stay as they are written (relative), so a linked file is the copy's, not the original's.
  cpSync(join(CASES, name, 'input'), dir, { recursive: true, verbatimSymlinks: true });
  for (const [dest, source] of Object.entries(c.charts)) {
    cpSync(chartSource(source), join(dir, dest), { recursive: true });
  }
  return dir;
}

async function oracle(dir: string, entry: string): Promise<Result> {
  try {
    const { stdout } = await run(
      KUSTOMIZE,
      ['build', '--enable-helm', '--helm-command', HELM, entry],
      // No kubeconfig or Helm settings of the caller's: helm's namespace defaults to "default".
      { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: work }, maxBuffer: 64 << 20 },
    );
    return { ok: true, out: stdout };
  } catch (err) {
    return { ok: false, err: String((err as { stderr?: string }).stderr ?? err) };
  }
}

async function mooring(dir: string, entry: string): Promise<Result> {
  try {
    const resources = await build(createConfinedFs(dir), entry, { helm: helmRenderer({ limits }) });
    return { ok: true, out: toYAML(resources) };
  } catch (err) {
    // A refusal is a KustomizeError; anything else is a crash and fails the case.
    if (!(err instanceof KustomizeError)) throw err;
    return { ok: false, err: err.message };
  }
}

const names = readdirSync(CASES, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(CASES, e.name, 'case.json')))
  .map((e) => e.name)
  .sort();

describe('kustomize helmCharts: Mooring equals kustomize --enable-helm with helm v3.22.0', () => {
  it('has cases over at least three vendored public charts', () => {
    const publics = new Set(
      names.flatMap((n) =>
        Object.values((JSON.parse(readFileSync(join(CASES, n, 'case.json'), 'utf8')) as Case).charts),
      ),
    );
    assert.ok([...publics].filter((s) => s.startsWith('public:')).length >= 3, [...publics].join(', '));
  });

  for (const name of names) {
    it(name, { timeout: 600_000 }, async () => {
      const c = JSON.parse(readFileSync(join(CASES, name, 'case.json'), 'utf8')) as Case;
      const dir = materialise(name, c);
      const entry = c.entry ?? '.';
      const want = await oracle(dir, entry);
      const got = await mooring(dir, entry);
      if (want.ok && got.ok) {
        assert.equal(got.out, want.out, `${name}: Mooring's build differs from kustomize's`);
      } else if (want.ok) {
        assert.fail(`${name}: kustomize builds it but Mooring refused it: ${got.ok ? '' : got.err}`);
      } else if (got.ok) {
        assert.fail(`${name}: kustomize refused it (${want.err.trim()}) but Mooring built it`);
      }
    });
  }
});
