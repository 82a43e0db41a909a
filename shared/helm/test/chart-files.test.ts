// The chart reaches the renderer as files in its request, not as a directory it opens
// (chart-files.ts, chart_files.go): what the renderer builds from them must be the chart
// `helm template <dir>` loads from the directory. Each case is a chart written here with one of
// loader.LoadDir's rules in play (.helmignore, its quirks, links, byte order marks, the file size
// limit, irregular files), rendered both ways: the same bytes, or the same refusal with Helm's
// message.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HelmMemoryError, HelmRendererPool, HelmTemplateError, renderChart } from '../src/index.ts';
import { helmTemplate, requireHelmBinaries } from './helm-oracle.ts';

requireHelmBinaries();

const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
const BOM = '\uFEFF';
const OVER_LIMIT = (5 << 20) + 1; // Helm's loader.MaxDecompressedFileSize + 1

/** A chart's files: text, a link (`-> target`), a FIFO (`fifo`), or a size to fill with zeros. */
type Tree = Record<string, string | { link: string } | { fifo: true } | { zeros: number }>;

const chartYaml = 'apiVersion: v2\nname: rules\nversion: 0.1.0\n';
// Every file .Files can see, and two of them read, so a file kept or dropped shows in the output.
const listing =
  'files: {{ range $path, $_ := .Files.Glob "**" }}{{ $path }} {{ end }}\n' +
  'bom: {{ .Files.Get "files/bom.txt" | quote }}\n' +
  'linked: {{ .Files.Get "files/link.txt" | quote }}\n';

const cases: Record<string, Tree> = {
  '.helmignore: names, directories, root-anchored and structural paths, templates/ dotfiles': {
    'Chart.yaml': chartYaml,
    '.helmignore': `# editors\n*.bak\nignored/\n/top.txt\nfiles/sub/skip.txt\n*.fifo\n*.bin\n`,
    'templates/list.yaml': listing,
    // Helm's default rule: a dotfile in templates/ is never a template (this one would not parse).
    'templates/.hidden.yaml': '{{ broken\n',
    'files/a.txt': 'a\n',
    'files/b.bak': 'ignored by name\n',
    'files/top.txt': 'kept: /top.txt matches the root only\n',
    'files/sub/skip.txt': 'ignored by its path\n',
    'files/sub/keep.txt': 'kept\n',
    'files/bom.txt': `${BOM}text after a byte order mark\n`,
    'files/pipe.fifo': { fifo: true },
    'files/big.bin': { zeros: OVER_LIMIT },
    'ignored/secret.txt': 'in an ignored directory\n',
    'top.txt': 'ignored at the root\n',
    'files/link.txt': { link: 'a.txt' },
    // A linked directory is walked under the link's name, so files/sub/skip.txt's rule misses it.
    'linked-dir': { link: 'files/sub' },
  },
  'a template and values.yaml with a byte order mark': {
    'Chart.yaml': chartYaml,
    'values.yaml': `${BOM}greeting: hello\n`,
    'templates/bom.yaml': `${BOM}greeting: {{ .Values.greeting }}\n`,
  },
  'names sorted by bytes within each directory, subcharts in charts/': {
    'Chart.yaml': `${chartYaml}dependencies:\n  - name: sub\n    version: 0.1.0\n`,
    'templates/a-b.yaml': '{{ define "which" }}a-b{{ end }}kind: A\n',
    'templates/a/b.yaml': '{{ define "which" }}a/b{{ end }}kind: B\n',
    'templates/z.yaml': 'which: {{ include "which" . }}\n',
    'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n',
    'charts/sub/.helmignore': 'only the top .helmignore counts\n*.yaml\n',
    'charts/sub/templates/s.yaml': 'sub: {{ .Chart.Name }}\n',
  },
};

const refusals: Record<string, Tree> = {
  // Helm's `!` rule ignores every path it does not match, Chart.yaml included.
  'a negated .helmignore rule': {
    'Chart.yaml': chartYaml,
    '.helmignore': '!keep.txt\n',
    'templates/a.yaml': 'a: 1\n',
  },
  'a .helmignore with **': { 'Chart.yaml': chartYaml, '.helmignore': '**/x\n', 'templates/a.yaml': 'a: 1\n' },
  'a file above the size limit': {
    'Chart.yaml': chartYaml,
    'templates/a.yaml': 'a: 1\n',
    'files/big.bin': { zeros: OVER_LIMIT },
  },
  "a link to a file above the size limit (Helm names the link's target)": {
    'Chart.yaml': chartYaml,
    '.helmignore': 'stash/\n',
    'templates/a.yaml': 'a: 1\n',
    'stash/big.bin': { zeros: OVER_LIMIT },
    'files/alias.txt': { link: '../stash/big.bin' },
  },
  'an irregular file': {
    'Chart.yaml': chartYaml,
    'templates/a.yaml': 'a: 1\n',
    'files/pipe': { fifo: true },
  },
};

describe("the renderer loads a chart from its request as Helm's LoadDir loads the directory", () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mooring-helm-chart-files-test-'));
  const pool = new HelmRendererPool({ size: 1 });
  after(() => {
    pool.close();
    rmSync(scratch, { recursive: true, force: true });
  });
  let count = 0;
  const write = (tree: Tree): string => {
    const root = join(scratch, `chart-${count++}`);
    for (const [name, content] of Object.entries(tree)) {
      const path = join(root, name);
      mkdirSync(dirname(path), { recursive: true });
      if (typeof content === 'string') writeFileSync(path, content);
      else if ('link' in content) symlinkSync(content.link, path);
      else if ('fifo' in content) execFileSync('mkfifo', [path]);
      else writeFileSync(path, Buffer.alloc(content.zeros));
    }
    return root;
  };
  const options = (chartDir: string) => ({ chartDir, releaseName: 'r', namespace: 'n' });

  for (const [name, tree] of Object.entries(cases)) {
    it(name, { timeout: 300_000 }, async () => {
      const chart = write(tree);
      const helm = await helmTemplate(options(chart));
      assert.equal(helm.code, 0, `helm template failed: ${helm.stderr}`);
      assert.equal(await renderChart({ ...options(chart), limits, pool }), helm.stdout);
    });
  }

  for (const [name, tree] of Object.entries(refusals)) {
    it(`refuses ${name} as helm does`, { timeout: 300_000 }, async () => {
      const chart = write(tree);
      const helm = await helmTemplate(options(chart));
      assert.notEqual(helm.code, 0, `helm template accepted it: ${helm.stdout}`);
      await assert.rejects(renderChart({ ...options(chart), limits, pool }), (err: unknown) => {
        assert.ok(err instanceof HelmTemplateError, `not a HelmTemplateError: ${String(err)}`);
        // helm logs each link it follows before its error.
        const said = helm.stderr.slice(helm.stderr.indexOf('Error: '));
        assert.ok(
          said.startsWith(`Error: ${err.helmMessage}`),
          `helm said ${JSON.stringify(helm.stderr)}, the renderer ${JSON.stringify(err.helmMessage)}`,
        );
        return true;
      });
    });
  }

  it("refuses a chart whose files alone exceed the renderer's memory, before rendering", {
    timeout: 60_000,
  }, async () => {
    const chart = write({
      'Chart.yaml': chartYaml,
      'files/one.bin': { zeros: 3 << 20 },
      'files/two.bin': { zeros: 3 << 20 },
    });
    const started = pool.started;
    await assert.rejects(
      renderChart({ ...options(chart), limits: { ...limits, memoryBytes: 4 << 20 }, pool }),
      (err: unknown) => {
        assert.ok(err instanceof HelmMemoryError, String(err));
        assert.match(err.message, /the chart's files alone hold more than 4194304 bytes/);
        return true;
      },
    );
    assert.equal(pool.started, started, 'a renderer was started for a chart that cannot fit');
  });
});
