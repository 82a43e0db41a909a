/**
 * The long run of the deterministic simulation, and the replay of one seed:
 *
 *   npm run simulate -- --seeds 10000 [--from 1] [--jobs 2]   many seeds, in parallel processes
 *   npm run simulate -- --seed 1234 [--trace]                  one seed, again, exactly
 *
 * Prints seeds per second, the violations by invariant (with the seeds that broke them and the
 * command that replays each), the bugs already known and reported, and the distribution of quiet
 * steps (5 simulated seconds each) from the end of the faults to convergence. Exits 1 when any
 * invariant other than a known bug is violated.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isKnown, MAX_QUIET_STEPS, type SimResult, simulate } from './simulation.ts';

export const replayCommand = (seed: number) => `npm run simulate -- --seed ${seed} --trace`;

/** What a worker reports per seed: the result without its trace. */
type Summary = Omit<SimResult, 'trace'> & { wallMs: number };

async function runRange(from: number, count: number, onResult: (r: Summary) => void): Promise<void> {
  for (let seed = from; seed < from + count; seed++) {
    const t0 = performance.now();
    const { trace: _trace, ...r } = await simulate(seed);
    onResult({ ...r, wallMs: performance.now() - t0 });
  }
}

function percentile(sorted: number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function report(results: Summary[], wallMs: number): { text: string; failed: boolean } {
  const lines: string[] = [];
  const n = results.length;
  lines.push(`${n} seeds in ${(wallMs / 1000).toFixed(1)} s: ${((n / wallMs) * 1000).toFixed(1)} seeds/s`);
  const requests = results.reduce((a, r) => a + r.requests, 0);
  const reconciles = results.reduce((a, r) => a + r.reconciles, 0);
  const restarts = results.reduce((a, r) => a + r.restarts, 0);
  lines.push(
    `${requests} API requests, ${reconciles} reconciles, ${restarts} operator restarts; at most ${Math.max(0, ...results.map((r) => r.maxReconcilesPerMinute))} reconciles of one Kustomization in a simulated minute`,
  );
  const byInvariant = new Map<string, { seeds: number[]; example: string }>();
  for (const r of results)
    for (const v of r.violations) {
      const entry = byInvariant.get(v.invariant) ?? {
        seeds: [],
        example: `seed ${r.seed}, step ${v.step}: ${v.message}`,
      };
      if (!entry.seeds.includes(r.seed)) entry.seeds.push(r.seed);
      byInvariant.set(v.invariant, entry);
    }
  const failing = [...byInvariant].filter(([k]) => !isKnown({ invariant: k } as never));
  const known = [...byInvariant].filter(([k]) => isKnown({ invariant: k } as never));
  const failedSeeds = new Set(
    results.filter((r) => r.violations.some((v) => !isKnown(v))).map((r) => r.seed),
  );
  lines.push(`invariant violations: ${failedSeeds.size} seeds${failedSeeds.size ? '' : ' (none)'}`);
  for (const [inv, e] of failing) {
    lines.push(
      `  ${inv}: ${e.seeds.length} seeds (${e.seeds.slice(0, 10).join(', ')}${e.seeds.length > 10 ? ', …' : ''})`,
    );
    lines.push(`    e.g. ${e.example.slice(0, 400)}`);
    lines.push(`    replay: ${replayCommand(e.seeds[0]!)}`);
  }
  if (known.length) lines.push('known bugs (reported; they do not fail a seed):');
  for (const [inv, e] of known) {
    lines.push(
      `  ${inv}: ${e.seeds.length} seeds (${e.seeds.slice(0, 10).join(', ')}${e.seeds.length > 10 ? ', …' : ''})`,
    );
    lines.push(`    e.g. ${e.example.slice(0, 300)}`);
  }
  const steps = results
    .flatMap((r) => (r.stepsToConverge === undefined ? [] : [r.stepsToConverge]))
    .sort((a, b) => a - b);
  lines.push(
    `steps to convergence after the faults stop (5 simulated s each, at most ${MAX_QUIET_STEPS}): ${steps.length} of ${n} converged; p50 ${percentile(steps, 50)}, p90 ${percentile(steps, 90)}, p99 ${percentile(steps, 99)}, max ${steps[steps.length - 1]}`,
  );
  const buckets = [1, 2, 5, 10, 20, 50, 100, 200, MAX_QUIET_STEPS];
  let lo = 0;
  for (const hi of buckets) {
    const count = steps.filter((s) => s > lo && s <= hi).length;
    const bar = '#'.repeat(Math.round((count / Math.max(1, n)) * 60));
    lines.push(
      `  ${lo + 1 === hi ? String(hi).padStart(7) : `${lo + 1}-${hi}`.padStart(7)} ${String(count).padStart(6)} ${bar}`,
    );
    lo = hi;
  }
  const wall = results.map((r) => r.wallMs).sort((a, b) => a - b);
  lines.push(
    `wall time per seed: p50 ${percentile(wall, 50)?.toFixed(0)} ms, max ${wall[wall.length - 1]?.toFixed(0)} ms`,
  );
  return { text: lines.join('\n'), failed: failedSeeds.size > 0 };
}

async function replay(seed: number, trace: boolean): Promise<number> {
  const t0 = performance.now();
  const r = await simulate(seed, { trace });
  const again = await simulate(seed);
  if (trace) for (const line of r.trace) console.log(line);
  console.log(
    `seed ${seed}: ${r.chaosSteps} chaos steps, ${r.steps} steps, ${r.requests} requests, ${r.reconciles} reconciles, ${r.restarts} restarts, ${r.pushes} pushes; converged after ${r.stepsToConverge ?? 'never'} quiet steps`,
  );
  console.log(
    `trace hash ${r.traceHash} (${again.traceHash === r.traceHash ? 'replays exactly' : `DIFFERS on a second run: ${again.traceHash}`})`,
  );
  for (const v of r.violations)
    console.log(
      `${isKnown(v) ? 'known bug' : 'VIOLATION'} ${v.invariant} at step ${v.step} (t=${(v.atMs / 1000).toFixed(1)}s): ${v.message}`,
    );
  console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s (two runs)`);
  return r.violations.some((v) => !isKnown(v)) || again.traceHash !== r.traceHash ? 1 : 0;
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seeds: { type: 'string', default: '1000' },
      from: { type: 'string', default: '1' },
      seed: { type: 'string' },
      trace: { type: 'boolean', default: false },
      jobs: { type: 'string', default: String(Math.min(2, availableParallelism())) },
      worker: { type: 'boolean', default: false },
    },
  });
  if (values.seed !== undefined) return replay(Number(values.seed), values.trace);
  const from = Number(values.from);
  const count = Number(values.seeds);
  if (values.worker) {
    await runRange(from, count, (r) => process.stdout.write(`${JSON.stringify(r)}\n`));
    return 0;
  }
  const jobs = Math.max(1, Math.min(Number(values.jobs), count));
  const results: Summary[] = [];
  const t0 = performance.now();
  let lastPrint = t0;
  const progress = (r: Summary) => {
    results.push(r);
    for (const v of r.violations)
      if (!isKnown(v))
        console.log(
          `seed ${r.seed}: ${v.invariant}: ${v.message.slice(0, 300)}  (replay: ${replayCommand(r.seed)})`,
        );
    const now = performance.now();
    if (now - lastPrint > 10_000) {
      lastPrint = now;
      console.log(
        `… ${results.length}/${count} seeds, ${((results.length / (now - t0)) * 1000).toFixed(1)} seeds/s`,
      );
    }
  };
  const script = fileURLToPath(import.meta.url);
  const per = Math.ceil(count / jobs);
  await Promise.all(
    Array.from({ length: jobs }, (_, j) => {
      const start = from + j * per;
      const n = Math.min(per, from + count - start);
      if (n <= 0) return Promise.resolve();
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', script, '--worker', '--from', String(start), '--seeds', String(n)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        if (line.startsWith('{')) progress(JSON.parse(line) as Summary);
      });
      return new Promise<void>((resolve, reject) =>
        child.on('exit', (code) =>
          code === 0 ? resolve() : reject(new Error(`worker ${j} exited with ${code}`)),
        ),
      );
    }),
  );
  results.sort((a, b) => a.seed - b.seed);
  const { text, failed } = report(results, performance.now() - t0);
  console.log(text);
  return failed ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
