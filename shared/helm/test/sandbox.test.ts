// The renderer's sandbox, property by property: each hostile chart is stopped or sees nothing,
// with a typed error. No assertion depends on how fast the machine is: a limit is hit or not,
// and the test deadlines are generous.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  HelmChartError,
  HelmMemoryError,
  HelmRenderError,
  HelmRendererPool,
  HelmTemplateError,
  HelmTimeoutError,
  renderChart,
} from '../src/index.ts';
import { defaultWasmPath, type RendererRequest, rendererModule, runRenderer } from '../src/render.ts';
import { RendererWorker } from '../src/renderer-worker.ts';
import { pagesFor } from '../src/wasm-memory.ts';
import { requireHelmBinaries, TESTDATA } from './helm-oracle.ts';
import { writeChartLinkingBeside } from './linked-chart.ts';

requireHelmBinaries();

const hostile = (name: string): string => join(TESTDATA, 'hostile', name);
const roomy = { timeoutMs: 120_000, memoryBytes: 1 << 30 };

describe('the Helm renderer sandbox', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mooring-helm-sandbox-test-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const base: RendererRequest = {
    chart: '/chart',
    releaseName: 'r',
    namespace: 'n',
    values: [],
    set: [],
    setString: [],
    setJSON: [],
    kubeVersion: '',
    apiVersions: [],
    includeCrds: false,
    isUpgrade: false,
    skipTests: false,
  };

  it('stops a chart whose template loops forever at the time limit', { timeout: 300_000 }, async () => {
    const timeoutMs = 5_000;
    await assert.rejects(
      renderChart({
        chartDir: hostile('loop'),
        releaseName: 'r',
        namespace: 'n',
        limits: { ...roomy, timeoutMs },
      }),
      (err: unknown) => {
        assert.ok(err instanceof HelmTimeoutError, String(err));
        assert.equal(err.kind, 'timeout');
        assert.equal(err.timeoutMs, timeoutMs);
        assert.match(err.message, /took longer than the 5000 ms time limit and was stopped/);
        return true;
      },
    );
  });

  it('stops a chart that builds a gigabyte string at the memory limit', { timeout: 300_000 }, async () => {
    const memoryBytes = 256 << 20;
    await assert.rejects(
      renderChart({
        chartDir: hostile('bigstring'),
        releaseName: 'r',
        namespace: 'n',
        limits: { timeoutMs: 240_000, memoryBytes },
      }),
      (err: unknown) => {
        assert.ok(err instanceof HelmMemoryError, String(err));
        assert.equal(err.kind, 'memory');
        assert.equal(err.memoryBytes, memoryBytes);
        assert.match(err.message, /needed more than the 268435456 byte memory limit and was stopped/);
        return true;
      },
    );
  });

  it('the same chart renders when the limit allows the string', { timeout: 300_000 }, async () => {
    // The memory error above is the limit's doing, not the renderer's failing on large data.
    const small = join(scratch, 'smallstring');
    cpSync(hostile('bigstring'), small, { recursive: true });
    writeFileSync(join(small, 'templates/big.yaml'), 'data: {{ repeat 1048576 "x" | len }}\n');
    const out = await renderChart({ chartDir: small, releaseName: 'r', namespace: 'n', limits: roomy });
    assert.equal(out, '---\n# Source: bigstring/templates/big.yaml\ndata: 1048576\n');
  });

  it('reads nothing outside the chart through .Files: .., absolute paths, globs', {
    timeout: 300_000,
  }, async () => {
    const out = await renderChart({
      chartDir: hostile('escape'),
      releaseName: 'r',
      namespace: 'n',
      limits: roomy,
    });
    assert.doesNotMatch(out, /root:/);
    for (const key of ['dotdot', 'dotdotdeep', 'absolute', 'hostname', 'globbedUp']) {
      assert.match(out, new RegExp(`^  ${key}: ""$`, 'm'), `${key} is not empty:\n${out}`);
    }
    // The glob sees the chart's own files only.
    assert.match(out, /^ {2}globbed: "files\/own.txt "$/m);
  });

  it('refuses a chart with a link that leads out of it', { timeout: 60_000 }, async () => {
    const chart = join(scratch, 'linked');
    cpSync(hostile('escape'), chart, { recursive: true });
    symlinkSync('/etc/passwd', join(chart, 'files/passwd'));
    await assert.rejects(
      renderChart({ chartDir: chart, releaseName: 'r', namespace: 'n', limits: roomy }),
      (err: unknown) => {
        assert.ok(err instanceof HelmChartError, String(err));
        assert.equal(err.kind, 'chart');
        assert.match(err.message, /chart file files\/passwd is a link that leads out of the chart/);
        return true;
      },
    );
  });

  it('follows a link elsewhere in the tree it is told the chart lies in, and nowhere else', {
    timeout: 120_000,
  }, async () => {
    const tree = join(scratch, 'tree');
    const chart = writeChartLinkingBeside(tree);
    const render = (linksWithin?: string) =>
      renderChart({
        chartDir: chart,
        ...(linksWithin ? { linksWithin } : {}),
        releaseName: 'r',
        namespace: 'n',
        includeCrds: true,
        limits: roomy,
      });
    assert.match(await render(tree), /name: widgets.example.com/);
    await assert.rejects(render(), /chart file crds is a link that leads out of the chart/);
    symlinkSync('/etc/passwd', join(chart, 'passwd'));
    await assert.rejects(
      render(tree),
      /chart file passwd is a link that leads out of the tree the chart is in/,
    );
  });

  it('the guest itself can open nothing but its chart directory', { timeout: 300_000 }, async () => {
    // Below renderChart's reading of the chart: a one-off renderer with a preopened directory is
    // asked to load charts outside /chart.
    const chart = join(scratch, 'preopen');
    cpSync(hostile('escape'), chart, { recursive: true });
    assert.match(await runRenderer(base, chart, 'preopen', roomy), /name: escape/);
    for (const outside of ['/', '/etc', '/chart/..', '/chart/../etc', '/chart/../../../etc', TESTDATA]) {
      await assert.rejects(
        runRenderer({ ...base, chart: outside }, chart, 'preopen', roomy),
        (err: unknown) => {
          assert.ok(err instanceof HelmTemplateError, `${outside}: ${String(err)}`);
          assert.doesNotMatch(err.helmMessage, /root:/);
          return true;
        },
        outside,
      );
    }
  });

  it('a pooled renderer has no directory at all: its charts come in the request', {
    timeout: 300_000,
  }, async () => {
    const module = await rendererModule(defaultWasmPath(), pagesFor(roomy.memoryBytes)).module();
    const worker = new RendererWorker(module);
    try {
      await worker.started();
      for (const path of ['/', '/chart', '.', TESTDATA]) {
        const outcome = await worker.render({ ...base, chart: path }, undefined, roomy.timeoutMs, undefined);
        assert.equal(outcome.kind, 'helm-error', `${path}: ${JSON.stringify(outcome)}`);
        assert.doesNotMatch(JSON.stringify(outcome), /Chart\.yaml|root:/, path);
      }
    } finally {
      worker.discard();
    }
  });

  it("the renderer's environment holds no token, kubeconfig or Secret", { timeout: 300_000 }, async () => {
    const saved = { ...process.env };
    process.env.KUBECONFIG = '/root/.kube/config';
    process.env.GITHUB_TOKEN = 'ghp_mooringtestsecret';
    process.env.MOORING_TEST_SECRET = 'mooring-test-secret';
    process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
    try {
      const chart = join(scratch, 'probe');
      cpSync(hostile('escape'), chart, { recursive: true });
      const probe = JSON.parse(await runRenderer({ ...base, probe: true }, chart, 'probe', roomy));
      // Go's wasip1 port starts in its first preopened directory.
      assert.deepEqual(probe, { environ: [], args: ['mooring-helm'], wd: '/chart' });
    } finally {
      process.env = saved;
    }
  });

  for (const fn of ['env', 'expandenv']) {
    it(`a template cannot ask for the environment: Helm has no ${fn}`, { timeout: 300_000 }, async () => {
      await assert.rejects(
        renderChart({ chartDir: hostile(fn), releaseName: 'r', namespace: 'n', limits: roomy }),
        (err: unknown) => {
          assert.ok(err instanceof HelmTemplateError, String(err));
          assert.match(err.helmMessage, new RegExp(`function "${fn}" not defined`));
          return true;
        },
      );
    });
  }

  describe('one warm renderer, reused', () => {
    // One renderer, so each render below runs where the one before it ran (or in its successor).
    const pool = new HelmRendererPool({ size: 1 });
    after(() => pool.close());
    const render = (chartDir: string, limits = roomy) =>
      renderChart({ chartDir, releaseName: 'r', namespace: 'n', limits, pool });

    it('a chart rendered after another sees none of its files', { timeout: 300_000 }, async () => {
      assert.equal(
        await render(join(TESTDATA, 'leftover-a')),
        '---\n# Source: leftover-a/templates/a.yaml\nprivate: "a secret of chart a"\n',
      );
      const started = pool.started;
      assert.equal(
        await render(join(TESTDATA, 'leftover-b')),
        '---\n# Source: leftover-b/templates/b.yaml\nprivate: ""\ndotdot: ""\nfiles: \ntemplates:\n',
      );
      assert.equal(pool.started, started, 'the second render started a renderer of its own');
    });

    it('a render after a timed-out one succeeds, in a new renderer', { timeout: 300_000 }, async () => {
      await render(hostile('escape'));
      const started = pool.started;
      await assert.rejects(render(hostile('loop'), { ...roomy, timeoutMs: 3_000 }), HelmTimeoutError);
      assert.match(await render(hostile('escape')), /name: escape/);
      assert.equal(pool.started, started + 1, 'the timed-out renderer was reused');
    });

    it('a render after one stopped at the memory limit succeeds, in a new renderer', {
      timeout: 300_000,
    }, async () => {
      const limits = { timeoutMs: 240_000, memoryBytes: 256 << 20 };
      await render(hostile('escape'), limits);
      const started = pool.started;
      await assert.rejects(render(hostile('bigstring'), limits), HelmMemoryError);
      assert.match(await render(hostile('escape'), limits), /name: escape/);
      assert.equal(pool.started, started + 1, 'the trapped renderer was reused');
    });

    it('a refusal leaves the renderer warm', { timeout: 300_000 }, async () => {
      await render(hostile('escape'));
      const started = pool.started;
      await assert.rejects(render(hostile('env')), HelmTemplateError);
      const linked = join(scratch, 'linked-warm');
      cpSync(hostile('escape'), linked, { recursive: true });
      symlinkSync('/etc/passwd', join(linked, 'files/passwd'));
      await assert.rejects(render(linked), HelmChartError);
      assert.match(await render(hostile('escape')), /name: escape/);
      assert.equal(pool.started, started);
    });
  });

  it('errors are typed: a missing renderer module', { timeout: 60_000 }, async () => {
    await assert.rejects(
      renderChart({
        chartDir: hostile('env'),
        releaseName: 'r',
        namespace: 'n',
        limits: roomy,
        wasmPath: join(scratch, 'absent.wasm'),
      }),
      (err: unknown) => err instanceof HelmRenderError && /is missing: build it/.test(err.message),
    );
  });
});
