// `npm run bench [-- <substring>...]`: runs every *.bench.ts (or those whose path contains a
// substring) one after another, each in its own Node process so they cannot disturb each other's
// memory figures, and writes the Markdown section each prints into docs/benchmarks.md. A partial
// run replaces only its own sections; the others stay as they were.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from './lib/control-plane.ts';

const SKIP_DIRS = new Set(['node_modules', '.git', 'bin', '.mooring', 'testdata']);
const TARGET = join(repoRoot, 'docs/benchmarks.md');

function findBenches(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) findBenches(join(dir, entry.name), out);
    } else if (entry.name.endsWith('.bench.ts')) out.push(relative(repoRoot, join(dir, entry.name)));
  }
  return out;
}

/** Sections already in the page, keyed by the bench file that wrote them. */
function existingSections(): Map<string, string> {
  const sections = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync(TARGET, 'utf8');
  } catch {
    return sections;
  }
  const re = /<!-- bench: (\S+) -->\n([\s\S]*?)<!-- \/bench -->/g;
  // The footer is written anew each time, so it is not part of what is kept.
  for (const m of text.matchAll(re)) sections.set(m[1]!, m[2]!.replace(/^_From `.*_$/gm, '').trim());
  return sections;
}

function runBench(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${file} exited ${code}`));
      else if (!out.trimStart().startsWith('## ')) reject(new Error(`${file} printed no "## " section`));
      else resolve(out.trim());
    });
  });
}

const filters = process.argv.slice(2);
const all = ['shared', 'operators', 'cli', 'test', 'hack'].flatMap((d) => {
  try {
    return findBenches(join(repoRoot, d));
  } catch {
    return [];
  }
});
const chosen = all.sort().filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (chosen.length === 0) {
  console.error(`bench: no *.bench.ts matched ${filters.join(' ')}`);
  process.exit(1);
}

const fresh = new Map<string, string>();
let failed = false;
for (const file of chosen) {
  console.error(`bench: ${file}`);
  try {
    fresh.set(file, await runBench(file));
  } catch (err) {
    console.error(`bench: ${(err as Error).message}`);
    failed = true;
  }
}

// Read the page only now: a long run must not drop a section someone else wrote in the meantime.
const sections = existingSections();
for (const [file, section] of fresh) sections.set(file, section);
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const body = [...sections.keys()]
  .sort()
  .map(
    (file) =>
      `<!-- bench: ${file} -->\n${sections.get(file)}\n\n_From \`${file}\`; rerun with \`npm run bench -- ${file.replace(/\.bench\.ts$/, '')}\`._\n<!-- /bench -->`,
  )
  .join('\n\n');
writeFileSync(
  TARGET,
  `# Benchmarks

<!-- Written by hack/bench.ts; each section comes from the *.bench.ts named under it. -->

\`npm run bench\` runs every benchmark one after another, each in its own Node process; \`npm run bench -- <name>\`
runs those whose path contains \`<name>\` and replaces only their sections. Figures are from one machine and one run:
compare the ratios measured side by side in the same run rather than absolute times, which move with the machine's
load. Last run on: ${machine}.

${body}
`,
);
console.error(`bench: wrote ${relative(repoRoot, TARGET)}`);
process.exitCode = failed ? 1 : 0;
